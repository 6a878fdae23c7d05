"""``foilbench score``: a benchmark scored by a model into a resumable run folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands.options import add_command, add_model, add_source, endpoint_of, parse_options, source_of

EXAMPLE = """examples:
  foilbench score vitatecs data/VITATECS/data --video-root data/VITATECS/videos \\
      --model openai/clip-vit-base-patch32 --frames uniform:k=8 --batch-size 32
  foilbench score velociti velociti.parquet --video-root videos --model Qwen/Qwen2-VL-7B-Instruct \\
      --protocol entail --prompt velociti-entail --frames second_middles --limit 100
  foilbench score vinoground Vinoground/ --model llava-hf/llava-onevision-qwen2-0.5b-ov-hf --protocol mc
  foilbench score vilma data/vilma --model gpt2 --name gpt2-blind          (a text-only baseline)
  foilbench score velociti velociti.parquet --video-root videos --endpoint https://api.openai.com/v1 \\
      --model gpt-4o --frames uniform:k=8 --dry-run       (what it would cost; then again without --dry-run)

  torchrun --nproc-per-node 8 -m bench score vitatecs data/VITATECS/data --video-root data/VITATECS/videos \
      --model openai/clip-vit-base-patch32 --out runs/vitatecs-clip     (8 GPUs, one rank each: see docs/run-store.md)

The family (contrastive, xclip, videollm, textlm) is read from the model's config; each family serves its protocols
(contrastive/xclip: similarity; videollm and api: entail (default) or mc; textlm: loglik). With --endpoint the model
is one served elsewhere (family api: OpenAI, Gemini, Claude, vLLM, SGLang; its key in $OPENAI_API_KEY or the variable
--api-key-env names): see docs/api.md.
Re-running the same command resumes where it stopped, with any number of ranks.
"""
# bench.frames.controls.CONTROLS, repeated so that --help imports no frame code
CONTROLS = ("blind", "one-frame", "shuffled", "reversed")


RESUME_HINT = "the items scored so far are stored: run the same command again to resume"


def _size(text: str) -> tuple[int, int] | str:
    if text in ("auto", "full"):
        return text
    width, _, height = text.lower().partition("x")
    try:
        found = int(width), int(height)
    except ValueError:
        raise ValueError(f"--size must be auto, full or WIDTHxHEIGHT like 224x224, got {text!r}") from None
    return found


def _workers(text: str) -> int | None:
    if text == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"--workers must be auto or a number, got {text!r}") from None


def config_of(args: argparse.Namespace):
    """The :class:`~bench.config.ScoreConfig` the arguments describe."""
    from bench.config import ScoreConfig

    return ScoreConfig(source_of(args), args.model, family=args.family, protocol=args.protocol,
                       frame_policy=args.frames, prompt=args.prompt, batch_size=args.batch_size, device=args.device,
                       dtype=args.dtype, out=args.out, limit=args.limit, spread=args.spread, seed=args.seed,
                       chunk_size=args.chunk_size,
                       workers=_workers(args.workers), decoder=args.decoder, size=_size(args.size), name=args.name,
                       retry_failures=args.retry_failures, progress=not args.quiet,
                       options=parse_options(args.backend_option), max_failure_rate=args.max_failure_rate,
                       control=args.control, endpoint=endpoint_of(args))


def run(args: argparse.Namespace) -> int:
    """Score and print where the run went (rank 0 only, under torchrun), with what a remote model's answers amount
    to; exit code 1, with every distinct failure reason and its count, when all items (or more than
    --max-failure-rate of them) failed; 3 when an API cap stopped it and 130 when interrupted, saying how to resume.
    With --dry-run, what an API run would send, and nothing sent."""
    import sys

    from bench.scoring.api.client import RequestCapReached
    from bench.scoring.console import quiet_library_bars
    from bench.scoring.distributed import ranks_of
    from bench.scoring.runner import TooManyFailures, score

    config = config_of(args)
    if args.dry_run:
        from bench.scoring.api.estimate import run_cost

        print(f"{run_cost(config).line()}; nothing sent (--dry-run)")
        return 0
    quiet_library_bars()
    try:
        out = score(config)
    except RequestCapReached as cap:
        print(f"foilbench score: stopped: {cap}; {RESUME_HINT}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        if ranks_of().leader:
            print(f"foilbench score: interrupted; {RESUME_HINT}", file=sys.stderr)
        return 130
    except TooManyFailures as failed:
        if ranks_of().leader:
            print(f"foilbench score: error: {failed}; failure reasons (items):", file=sys.stderr)
            print("\n".join(failed.summary.reason_lines()), file=sys.stderr)
        return 1
    if ranks_of().leader:
        if config.endpoint is not None:
            print("\n".join(answer_lines(out)))
        print(f"run stored in {out}")
        _warn_ties(out)
    return 0


def answer_lines(out) -> list[str]:
    """What a remote model's stored run amounts to: its answers (how many bad: empty, refused, unparsed), how the
    benchmark's first item metric counts the items they touch (dropped or counted wrong, as ``foilbench metrics``
    does), and what was spent (attempts, faults met, tokens, the model ids and fingerprints returned)."""
    from bench.metrics.aggregate import ALL
    from bench.metrics.dispatch import run_table
    from bench.registry import spec
    from bench.store import read_run
    from bench.store.responses import read_responses, usage_totals

    run = read_run(out)
    bad = [*run.pair.loc[run.pair["score"].isna(), "answer"], *run.choice.loc[run.choice["choice"] == -1, "answer"]]
    empty = sum(a == "None" for a in bad)
    lines = [f"answers ({run.manifest.measure}): {len(run.pair) + len(run.choice)} stored, {len(bad)} bad ({empty} "
             f"empty or refused, {len(bad) - empty} unreadable)"]
    table = run_table(run)
    table = table[table["by"] == ALL]
    metric = next((m for m in spec(run.manifest.benchmark).item_score if m in set(table["metric"])), None)
    if metric is not None and bad:
        row = table[table["metric"] == metric].iloc[0]
        lines.append(f"{metric}: {int(row['n_unparsed'])} items with a bad answer: {int(row['n_dropped'])} dropped "
                     f"(as the paper's scoring does), {int(row['n_unparsed'] - row['n_dropped'])} counted wrong")
    totals = usage_totals(read_responses(out))
    tokens = totals["tokens"]
    faults = ", ".join(f"{n} x {f}" for f, n in totals["faults"].items()) or "none"
    lines.append(f"responses: {totals['responses']} in {totals['attempts']} attempts (faults met: {faults}); tokens: "
                 f"{tokens.get('prompt_tokens', 0):,} in, {tokens.get('completion_tokens', 0):,} out; model "
                 f"{', '.join(totals['models']) or '?'}; fingerprint "
                 f"{', '.join(totals['system_fingerprints']) or 'none returned'}")
    return lines


def _warn_ties(out: Path) -> None:
    """One line on stderr when ties decided a notable share of the run's items."""
    import sys

    from bench.metrics.dispatch import tie_line
    from bench.store import read_run

    line = tie_line(read_run(out))
    if line:
        print(f"foilbench score: warning: {out.name}: {line}", file=sys.stderr)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``score`` command."""
    from bench.scoring.protocols import PROTOCOLS

    p = add_command(
        subparsers, "score", "score a benchmark with a model into a resumable run folder",
        "Score every item of BENCHMARK (read from DATA as released) with MODEL (a hub id or a local folder), writing "
        "per-item scores to a run folder. Killing and re-running resumes.", EXAMPLE)
    add_source(p)
    add_model(p)
    p.add_argument("--max-requests", type=int, metavar="N",
                   help="API: send at most N requests in this launch, retries included (then it stops as an "
                        "interrupt does: run again to resume)")
    p.add_argument("--token-budget", type=int, metavar="N",
                   help="API: send at most about N input tokens in this launch (the --dry-run estimate)")
    p.add_argument("--dry-run", action="store_true",
                   help="API: print the requests, images and estimated tokens the run would send; send nothing")
    p.add_argument("--protocol", choices=list(PROTOCOLS), help="what is asked (default: the family's first)")
    p.add_argument("--frames", default="uniform:k=8",
                   help="frame policy NAME[:KEY=VALUE,...] (default uniform:k=8; e.g. fps:fps=1,max_frames=12, "
                        "segment_midpoints:k=32, second_middles, none for a blind run; add order=reverse to "
                        "feed the frames backwards)")
    p.add_argument("--control", choices=CONTROLS,
                   help="a shortcut control derived from --frames: blind (no video; one black frame for similarity "
                        "models), one-frame (the middle frame), shuffled (seeded by --seed), reversed; recorded in "
                        "the run's manifest")
    p.add_argument("--prompt", help="protocol prompt name or a template with {caption} (entail) or {option_a} and "
                                    "{option_b} / {options} (mc), any other {name} an item label ({question}: "
                                    "MVP's, TempCompass', TVBench's); default: the benchmark's own")
    p.add_argument("--batch-size", type=int, default=8, help="requests per forward pass, halved on out-of-memory "
                                                             "(default 8)")
    p.add_argument("--device", default="auto", help="auto (CUDA, else MPS, else CPU), cpu, cuda, cuda:1... "
                                                    "(default auto; under torchrun cuda means cuda:LOCAL_RANK)")
    p.add_argument("--dtype", default="auto", choices=["auto", "float32", "float16", "bfloat16"],
                   help="auto: bfloat16/float16 on GPU, float32 on CPU")
    p.add_argument("--out", help="run folder (default <data home>/runs/<benchmark>-<protocol>-<model>-<hash>)")
    p.add_argument("--limit", type=int, help="score only the first N items (with their ViLMA twins)")
    p.add_argument("--spread", action="store_true",
                   help="with --limit N: N items spread evenly over the file instead of the first N")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the seeded frame policies (consecutive, single:mode=random) and of torch (default 0)")
    p.add_argument("--chunk-size", type=int, default=32,
                   help="items stored per chunk (default 32; a resumed run keeps the size it started with)")
    p.add_argument("--workers", default="auto",
                   help="frame decoding (and preprocessing) threads: auto (one per core, the default) or a number")
    p.add_argument("--decoder", default="decord", choices=["decord", "pyav"], help="video decoder (default decord)")
    p.add_argument("--size", default="auto",
                   help="decode frames to: auto (the size the model's processor resizes to, the default), full (the "
                        "video's own size: the processor resizes), or WIDTHxHEIGHT")
    p.add_argument("--max-failure-rate", type=float, default=1.0, metavar="RATE",
                   help="exit with an error when more than this share of the items failed (default 1.0: only when "
                        "all items failed); the run is stored either way")
    p.add_argument("--name", help="short run label for tables (default: the folder name)")
    p.add_argument("--retry-failures", action="store_true", help="score again the items recorded as failures")
    p.add_argument("-b", "--backend-option", action="append", default=[], metavar="KEY=VALUE",
                   help="backend option, e.g. reuse=none to run Video-LLM requests whole (default reuse=auto: "
                        "KV-prefix reuse, checked on the first batch), preprocess=cpu to run the processor on the CPU "
                        "when the model is on a GPU")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
