"""``foilbench import``: released scores and closed models' answers as runs."""

from __future__ import annotations

import argparse

from bench.commands.options import add_command, add_source, source_of

EXAMPLE = """examples:
  foilbench import vinoground textscore-response.jsonl videoscore-response.jsonl --benchmark vinoground \\
      --data Vinoground/ --model-name gpt-4o --out runs/vino-gpt4o
  foilbench import vilma results.json --proficiency prof-results.json --benchmark vilma \\
      --data data/relations.json --mode similarity --model-name clip --out runs/vilma-clip-relations
  foilbench import vilma relations=rel.json SRL_Action_Replacement_Top_1000=ar.json \\
      --proficiency relations=rel-prof.json --proficiency SRL_Action_Replacement_Top_1000=ar-prof.json \\
      --benchmark vilma --data data/ --model-name clip --out runs/vilma-clip
  foilbench import videocon eval_ssv2_temporal_scores.csv --benchmark videocon --data datasets/eval_ssv2_temporal.csv \\
      --model-name owl-con --out runs/owlcon-ssv2
  foilbench import tempcompass TempCompass/predictions/gemini/*.json --benchmark tempcompass --data TempCompass/ \\
      --model-name gemini --out runs/tempcompass-gemini
"""


def run(args: argparse.Namespace) -> int:
    """Import and print where the run went, the items answered and not, and the answers that could not be read."""
    from bench.importers.common import import_lines, import_run
    from bench.store import read_run

    if args.proficiency and args.format != "vilma":
        raise ValueError("--proficiency belongs to the vilma format")
    options = {"mode": args.mode, "proficiency": list(args.proficiency)} if args.format == "vilma" else {}
    out = import_run(args.format, args.files, source_of(args), args.out, args.model_name,
                     extra_files=args.proficiency, **options)
    print(f"run stored in {out}")
    for line in import_lines(read_run(out)):
        print(f"  {line}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``import`` command."""
    from bench.importers.common import formats

    found = formats()
    listed = "; ".join(f"{fmt} ({', '.join(benchmarks)})" for fmt, benchmarks in found.items())
    parser = add_command(
        subparsers, "import", "import released scores or closed models' answers as a run",
        f"Import FILES of FORMAT as a run of BENCHMARK. Formats (benchmarks): {listed}. answers: item_id,text,answer "
        "rows; velociti-closed: pos_pred,neg_pred rows; vinoground: *score-response.jsonl; vilma: results JSON of "
        "the main test (FILES) and of the proficiency test (--proficiency), as bin/multi_eval.py takes both for "
        "P+T; keys repeat across ViLMA's subtests, so write SUBTEST=FILE when a folder holds several; videocon: "
        "released score CSVs; tempcompass: predictions/<model>/<task>.json, read with the official rules (no ChatGPT "
        "judge: what they cannot read counts 0); tvbench: the official notebook's results JSON.", EXAMPLE)
    parser.add_argument("format", choices=list(found))
    parser.add_argument("files", nargs="+", help="the file(s) to import")
    add_source(parser, positional=False)
    parser.add_argument("--model-name", required=True, help="the model's name in tables")
    parser.add_argument("--out", required=True, help="run folder to create")
    parser.add_argument("--mode", default="similarity", choices=["similarity", "probability", "perplexity"],
                        help="ViLMA results: what the scores are (default similarity)")
    parser.add_argument("--proficiency", action="append", default=[], metavar="[SUBTEST=]FILE",
                        help="ViLMA results of the proficiency test, repeatable")
    parser.set_defaults(func=run)
