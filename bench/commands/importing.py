"""``foilbench import``: released scores and closed models' answers as runs."""

from __future__ import annotations

import argparse

IMPORT_EXAMPLE = """examples:
  foilbench import vinoground textscore-response.jsonl videoscore-response.jsonl --benchmark vinoground \\
      --data Vinoground/ --model-name gpt-4o --out runs/vino-gpt4o
  foilbench import vilma results.json --benchmark vilma --data data/relations.json --mode similarity \\
      --model-name clip --out runs/vilma-clip-relations
  foilbench import videocon eval_ssv2_temporal_scores.csv --benchmark videocon --data datasets/eval_ssv2_temporal.csv \\
      --model-name owl-con --out runs/owlcon-ssv2
"""



def run_import(args: argparse.Namespace) -> int:
    """Import and print where the run went."""
    from bench.commands.summary import parse_options
    from bench.scoring.importers import import_run

    options = {"mode": args.mode, "proficiency": args.proficiency} if args.format == "vilma" else {}
    out = import_run(args.format, args.files, args.benchmark, args.data, args.out, args.model_name,
                     video_root=args.video_root, loader_options=parse_options(args.option), **options)
    print(f"run stored in {out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``import``."""
    from bench.loaders import LOADERS
    from bench.scoring.importers import IMPORTERS

    q = subparsers.add_parser(
        "import", help="import released scores or closed models' answers as a run",
        description="Import FILES of FORMAT (answers: item_id,text,answer; velociti-closed: pos_pred,neg_pred; "
        "vinoground: *score-response.jsonl; vilma: results JSON; videocon: released score CSVs) as a run.",
        epilog=IMPORT_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("format", choices=sorted(IMPORTERS))
    q.add_argument("files", nargs="+", help="the file(s) to import")
    q.add_argument("--benchmark", required=True, choices=sorted(LOADERS))
    q.add_argument("--data", required=True, help="the annotation file or folder the scores refer to")
    q.add_argument("--video-root", help="folder the benchmark's video paths are relative to")
    q.add_argument("--model-name", required=True, help="the model's name in tables")
    q.add_argument("--out", required=True, help="run folder to create")
    q.add_argument("--mode", default="similarity", choices=["similarity", "probability", "perplexity"],
                   help="ViLMA results: what the scores are (default similarity)")
    q.add_argument("--proficiency", action="store_true", help="ViLMA results of the proficiency test")
    q.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE", help="loader option")
    q.set_defaults(func=run_import)
