"""``foilbench metrics``: each benchmark's metric table for one or more stored runs."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from bench.commands.options import add_command

EXAMPLE = """examples:
  foilbench metrics runs/vilma-clip
  foilbench metrics runs/velociti-ov7b runs/velociti-qwen --bootstrap 2000 --level 0.99
  foilbench metrics runs/videocon-owlcon --ties expected --by misalignment --json > videocon.json
  foilbench metrics runs/*-xclip runs/*-clip --pool foil_type
  foilbench metrics foilbench-data/runs/sample-full --pool foil_type    (a folder of runs: all of them)

Values, intervals and chance levels print as percentages. Ties follow --ties (default official: what each
benchmark's released code does); 'strict' shows the value when every tie fails, 'ties' how many items a tie
decided. '*' marks a result better than chance, one-sided (for "MC bias (B-A)": different from 0, a choice bias);
the test counts a tie as no more than a fair coin's share (1/k) whatever --ties says, so a tie never earns a star and
a model that scores everything alike is never starred (without ties a star means the interval lies above chance).
'holm' repeats the mark after Holm's correction over the rows of one breakdown. --pool LABEL pools runs of the
same name over benchmarks: one judgement per item (did the true text win outright, by the benchmark's own per-item
score; a tie is not a win, as in `foilbench compare`, or a fair coin's share with --ties expected), accuracy per
value of LABEL, 'tied' the items a tie decided.
"""


def _percent(value: float) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}"


def _chance(value: float, test: str) -> str:
    from bench.metrics.aggregate import UNINFORMATIVE

    return f"{_percent(value)} (uninformative)" if test == UNINFORMATIVE else _percent(value)


def format_table(table) -> str:
    """A metric table as aligned text: value [ci] chance n, the strict value and the items a tie decided, missing /
    NaN / unparsed / dropped counts, p-value and the Holm-corrected mark."""
    import pandas as pd

    shown = pd.DataFrame({
        "run": table["run"],
        "metric": table["metric"],
        "by": table["by"],
        "subset": table["subset"],
        "value": [_percent(v) + ("*" if s else "") for v, s in zip(table["value"], table["significant"])],
        "CI": [f"[{_percent(lo)}, {_percent(hi)}]" for lo, hi in zip(table["ci_low"], table["ci_high"])],
        "chance": [_chance(c, t) for c, t in zip(table["chance"], table["test"])],
        "n": table["n"],
        "strict": [_percent(v) for v in table["strict"]],
        "ties": table["n_tie"],
        "missing": table["n_missing"],
        "nan": table["n_nan"],
        "unparsed": table["n_unparsed"],
        "dropped": table["n_dropped"],
        "p": ["-" if math.isnan(p) else f"{p:.2g}" for p in table["p_value"]],
        "holm": ["*" if s else "" for s in table["significant_holm"]],
    })
    for column in ("unparsed", "dropped"):
        if not shown[column].any():
            shown = shown.drop(columns=column)
    if shown["run"].nunique() == 1:
        shown = shown.drop(columns="run")
    return shown.to_string(index=False)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return _jsonable(value.item())
    return value


def compute(paths: list[str], settings, by: list[str] | None, ties: str | None = None) -> list[dict]:
    """Per run: its path, label, benchmark, metric table (under tie policy ``ties``, default
    :data:`bench.metrics.ties.DEFAULT_TIES`) and coverage notes. A run with no scored item has an empty table and a
    note saying so."""
    from tqdm.auto import tqdm

    from bench.metrics.dispatch import coverage_notes, run_items, run_table, tie_line
    from bench.metrics.ties import DEFAULT_TIES
    from bench.store import read_run
    from bench.store.summary import summarize

    results = []
    for path in tqdm(paths, desc="runs", unit="run", disable=len(paths) < 2):
        run = read_run(path)
        m = run.manifest
        items = run_items(run)
        notes = coverage_notes(items, run.pair, run.choice, run.failures, m)
        if m.status != "complete":
            notes.insert(0, f"run status is {m.status!r}, not 'complete': unscored items count as failures")
        notes += [line for line in [tie_line(run)] if line]
        table = run_table(run, settings, by=by, items=items, ties=ties or DEFAULT_TIES)
        summary = summarize(run)
        if table.empty:
            notes = [f"no item of this run was scored ({summary.scored} of {summary.items}): no value to show"]
        results.append({"path": str(path), "run": run.label, "benchmark": m.benchmark,
                        "measure": m.measure, "table": table, "notes": notes, "summary": summary})
    return results


def describe(settings, ties: str) -> str:
    """The header line: tie policy, interval methods and what the marks mean."""
    return (f"ties: {ties}; {settings.level:.0%} intervals: exact Clopper-Pearson for shares of items, MOVER for "
            f"averages of tests, bootstrap ({settings.n_boot} resamples) for AUROC and mAP; * = better than chance, "
            f"one-sided p < {settings.alpha:.3g}, a tie counted as no more than a fair coin's share (1/k) whatever the "
            f"tie policy; holm = the same after Holm's correction per breakdown")


def format_pooled(table) -> str:
    """A pooled table (:func:`bench.metrics.pooled.pooled_table`) as aligned text, one block per run."""
    import pandas as pd

    if not len(table):
        return "  (no rows)"
    label = table["label"].iloc[0]
    shown = pd.DataFrame({
        "run": table["run"], label: table["value"],
        "accuracy": [f"{a:.1f}" + ("*" if above else "") for a, above in zip(table["accuracy"], table["above"])],
        "CI": [f"[{lo:.1f}, {hi:.1f}]" for lo, hi in zip(table["low"], table["high"])],
        "chance": [f"{c:.1f}" for c in table["chance"]], "n": table["n"], "tied": table["tied"],
        "p": ["-" if math.isnan(p) else f"{p:.2g}" for p in table["p"]]})
    return shown.sort_values(["run", label], kind="stable").to_string(index=False)


def pooled(args: argparse.Namespace) -> int:
    """Print (or dump as JSON) the runs pooled over benchmarks by ``args.pool``."""
    from bench.metrics.pooled import pool_runs
    from bench.store import read_run

    runs = [read_run(p) for p in args.runs]
    table = pool_runs(runs, args.pool, args.level, args.ties)
    if args.json:
        json.dump({"settings": {"level": args.level, "ties": args.ties, "pool": args.pool},
                   "rows": [{k: _jsonable(v) for k, v in rec.items()} for rec in table.to_dict(orient="records")]},
                  sys.stdout, indent=1, ensure_ascii=False)
        print()
    else:
        benchmarks = ", ".join(dict.fromkeys(r.manifest.benchmark for r in runs))
        judged = "a tie counts 1/k" if args.ties == "expected" else "a tie is not told apart (wrong)"
        print(f"== pooled by {args.pool} over {len(runs)} run(s) of {benchmarks}: accuracy (%) with "
              f"{args.level:.0%} exact interval, mean chance; {judged}; * = chance below the interval; tied = items "
              f"a tie decided")
        print(format_pooled(table))
    sys.stdout.flush()
    return 0


def run(args: argparse.Namespace) -> int:
    """Compute and print (or dump as JSON) the metric tables of the given runs."""
    import pandas as pd

    from bench.metrics.aggregate import Settings
    from bench.metrics.ties import DEFAULT_TIES, check
    from bench.store import run_folders

    args.ties = check(args.ties or DEFAULT_TIES)
    args.runs = run_folders(args.runs)
    if args.pool:
        return pooled(args)
    settings = Settings(n_boot=args.bootstrap, level=args.level, seed=args.seed)
    results = compute(args.runs, settings, args.by or None, args.ties)
    if args.metric:
        for r in results:
            r["table"] = r["table"][r["table"]["metric"].isin(args.metric)]
    if args.json:
        payload = {
            "settings": {"bootstrap": settings.n_boot, "level": settings.level, "seed": settings.seed,
                         "alpha": settings.alpha, "ties": args.ties},
            "runs": [{**{k: r[k] for k in ("path", "run", "benchmark", "measure", "notes")},
                      "items": r["summary"].items, "scored": r["summary"].scored, "failed": r["summary"].failed,
                      "failure_reasons": r["summary"].reasons} for r in results],
            "rows": [{k: _jsonable(v) for k, v in rec.items()}
                     for r in results for rec in r["table"].to_dict(orient="records")],
        }
        json.dump(payload, sys.stdout, indent=1, ensure_ascii=False)
        print()
        sys.stdout.flush()  # a closed pipe raises here, inside the command, where the CLI ends quietly
        return 0
    by_benchmark: dict[str, list[dict]] = {}
    for r in results:
        by_benchmark.setdefault(r["benchmark"], []).append(r)
    for benchmark, group in by_benchmark.items():
        print(f"== {benchmark}: {', '.join(r['run'] for r in group)} ({describe(settings, args.ties)})")
        for r in group:
            print(f"  run [{r['run']}]: {r['summary'].line()}")
            for note in r["notes"]:
                print(f"  note [{r['run']}]: {note}")
        table = pd.concat([r["table"] for r in group if len(r["table"])] or [group[0]["table"]], ignore_index=True)
        order = {m: i for i, m in enumerate(dict.fromkeys(table["metric"]))}
        table = table.assign(_m=table["metric"].map(order), _r=range(len(table)))
        if len(group) > 1:
            table = table.sort_values(["_m", "by", "subset", "_r"], kind="stable")
        print(format_table(table.drop(columns=["_m", "_r"])) if len(table) else "  (no rows)")
        notes = table.loc[table["note"] != "", ["metric", "note"]].drop_duplicates()
        for metric, note in zip(notes["metric"], notes["note"]):
            print(f"  {metric}: {note}")
        print()
    sys.stdout.flush()
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``metrics`` command."""
    parser = add_command(
        subparsers, "metrics",
        "print each benchmark's metric tables (value, CI, chance, significance) for stored runs",
        "Compute every metric of each run's benchmark from its stored score tables: over all items, per subset and "
        "per label breakdown, with a confidence interval, the exact chance level of the actual items, a test of "
        "'better than chance' consistent with the interval, and its Holm-corrected version. Ties follow --ties. "
        "Missing and NaN scores count as failures and are counted; unparsed answers too, except where the "
        "benchmark's official code drops them (counted as dropped).",
        EXAMPLE)
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="run folder(s) written by the run store, or folders holding run folders")
    parser.add_argument("--json", action="store_true", help="print one JSON object (settings, runs, rows)")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    parser.add_argument("--level", type=float, default=0.95,
                        help="confidence level of the intervals (default 0.95); a result is marked significant when "
                             "chance lies below its interval, a one-sided test at (1 - level) / 2")
    parser.add_argument("--ties", metavar="POLICY",
                        help="tie policy (bench.metrics.ties.TIES): official (each benchmark's released code, "
                             "default), strict (a tie fails), expected (random tie-breaking, exact expectation)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and simulations (default 0)")
    parser.add_argument("--by", action="append", metavar="LABEL",
                        help="item label to break down by, repeatable (default: the benchmark's usual ones)")
    parser.add_argument("--metric", action="append", metavar="NAME", help="only this metric, repeatable")
    parser.add_argument("--pool", metavar="LABEL",
                        help="pool runs of the same name over benchmarks and print accuracy per value of this item "
                             "label (e.g. foil_type of the generated world)")
    parser.set_defaults(func=run)
