"""``foilbench compare``: runs of one benchmark compared item by item (logic in :mod:`bench.analysis.items`)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from bench.commands.options import add_command

EXAMPLE = """examples:
  foilbench compare runs/vitatecs-clip runs/vitatecs-x-clip
  foilbench compare runs/vitatecs-clip runs/vitatecs-x-clip runs/vitatecs-clip-shuffled --by foil_type
  foilbench compare runs/vitatecs-* --by foil_type --json > vitatecs-pairs.json

Each item is judged by its benchmark's own per-item score (did the true text win outright: an item a tie decided is
not told apart, whatever the benchmark's official tie rule; each run's ties are counted). Every pair of runs is
compared on the items both scored: agreement, Cohen's kappa with its 95% Wald interval (large-sample SE of Fleiss,
Cohen and Everitt), and the exact two-sided McNemar test of the accuracy difference; with --by LABEL also per value
of the label, Holm-corrected across the values of each pair. Items: how many runs got each right (and tied it),
difficulty (share of the runs right) with its exact interval, hardest first.
"""
PAIR_KEYS = ("a", "b", "label", "value", "n", "agreement", "kappa", "kappa_ci", "mcnemar_p", "p_holm", "tied_a",
             "tied_b")
ITEM_KEYS = ("item_id", "runs_right", "runs_scored", "runs_tied", "difficulty", "difficulty_ci", "right", "all_fail",
             "only_run", "disagree", "mean_margin", "margins", "subset", "text")


def _plain(value):
    """A JSON-ready value: NaN -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def as_json(pairs, items, labels: list[str], ties=None) -> dict:
    """The ``--json`` document: ``{"pairs": [...], "items": [...], "ties": [...]}`` (keys :data:`PAIR_KEYS`; items
    with :data:`ITEM_KEYS` and their labels; ties: each run's ``run``, ``tied``, ``scored`` from
    :func:`bench.analysis.items.tie_counts`)."""
    margin_columns = [c for c in items.columns if c.startswith("margin: ")]
    out_items = []
    for r in items.to_dict("records"):
        found = {**r, "difficulty_ci": (r["difficulty_low"], r["difficulty_high"]),
                 "margins": {c[len("margin: "):]: r[c] for c in margin_columns}, "only_run": r["only_run"] or None}
        out_items.append({k: _plain(found[k]) if k != "margins" else {m: _plain(v) for m, v in found[k].items()}
                          for k in (*ITEM_KEYS, *labels) if k in found})
    return {"pairs": [{k: _plain(r[k]) for k in PAIR_KEYS} for r in pairs.to_dict("records")], "items": out_items,
            "ties": [] if ties is None else [{k: _plain(v) for k, v in r.items()} for r in ties.to_dict("records")]}


def _p(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2g}"


def format_text(pairs, items, top: int, ties: list[str] = ()) -> str:
    """The agreement matrix (kappa), the paired tests, the runs' ties (``ties``: lines of
    :func:`bench.analysis.items.tie_notes`) and the ``top`` hardest items, as aligned text."""
    import pandas as pd

    from bench.analysis.items import agreement_matrix

    names = {r: f"[{n}]" for n, r in enumerate(dict.fromkeys([*pairs["a"], *pairs["b"]]), 1)}
    lines = ["runs:"] + [f"  {tag} {run}" for run, tag in names.items()]
    matrix = agreement_matrix(pairs).rename(index=names, columns=names)
    lines += ["", "Cohen's kappa (all items both runs scored):",
              matrix.map(lambda v: "-" if math.isnan(v) else f"{v:.2f}").to_string()]
    shown = pd.DataFrame({
        "a": pairs["a"].map(names), "b": pairs["b"].map(names),
        "by": [f"{lab}={val}" if lab else "all" for lab, val in zip(pairs["label"], pairs["value"])],
        "n": pairs["n"],
        "acc a": [f"{100 * v:.1f}" for v in pairs["accuracy_a"]],
        "acc b": [f"{100 * v:.1f}" for v in pairs["accuracy_b"]],
        "agree": [f"{100 * v:.1f}" for v in pairs["agreement"]],
        "kappa [95% CI]": ["-" if math.isnan(k) else f"{k:.2f} [{lo:.2f}, {hi:.2f}]"
                           for k, (lo, hi) in zip(pairs["kappa"], pairs["kappa_ci"])],
        "only a": pairs["only_a"], "only b": pairs["only_b"],
        "tied a/b": [f"{a}/{b}" for a, b in zip(pairs["tied_a"], pairs["tied_b"])],
        "McNemar p": [_p(p) for p in pairs["mcnemar_p"]],
        "Holm p": [_p(p) if lab else "" for p, lab in zip(pairs["p_holm"], pairs["label"])],
    })
    lines += ["", "Paired tests (exact McNemar, two-sided; Holm across the values of each pair):",
              shown.to_string(index=False)]
    for run in sorted(names, key=len, reverse=True):  # the runs by their tags, the longest names first
        ties = [note.replace(run, names[run]) for note in ties]
    lines += ["", *ties] if ties else []
    hardest = items.head(top)
    listed = pd.DataFrame({
        "item": hardest["item_id"], "right": [f"{k}/{n}" for k, n in zip(hardest["runs_right"],
                                                                           hardest["runs_scored"])],
        "tied": hardest["runs_tied"],
        "difficulty [95% CI]": [f"{100 * d:.0f} [{100 * lo:.0f}, {100 * hi:.0f}]" for d, lo, hi in
                                zip(hardest["difficulty"], hardest["difficulty_low"], hardest["difficulty_high"])],
        "text": [t if len(t) <= 90 else t[:87] + "..." for t in hardest["text"]]})
    fails, alone, disagree = (int(items["all_fail"].sum()), int((items["only_run"] != "").sum()),
                              int(items["disagree"].sum()))
    lines += ["", f"{len(items)} items; every run fails {fails}, exactly one run gets {alone} right, the runs disagree "
              f"on {disagree}. Hardest {len(hardest)} (difficulty: % of the runs right):",
              listed.to_string(index=False)]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Compare the runs and print the text report or the JSON document."""
    from bench.analysis.items import item_outcomes, item_table, pair_table, tie_counts, tie_notes
    from bench.store import read_run
    from bench.store.run import run_folders

    if args.top < 0:
        raise ValueError(f"--top must be at least 0, got {args.top}")
    if not 0 < args.level < 1:
        raise ValueError(f"--level must lie in (0, 1), got {args.level}")
    runs = {}
    for given in args.runs:
        found = run_folders([given])
        for path in found:
            key = given if found == [Path(given)] else str(path)
            runs[key] = read_run(path)
    if len(runs) < 2:
        raise ValueError(f"compare needs at least two runs, got {len(runs)}")
    long, found = item_outcomes(runs)
    pairs, items = pair_table(long, args.by, args.level), item_table(long, found, args.level)
    labels = [args.by] if args.by and args.by != "subset" else []
    if args.json:
        print(json.dumps(as_json(pairs, items, labels, tie_counts(long)), indent=1))
    else:
        print(format_text(pairs, items, args.top, tie_notes(long)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` command."""
    parser = add_command(subparsers, "compare", "compare runs of one benchmark item by item, with paired tests",
                         "Compare stored runs of one benchmark on the items they both scored: the agreement matrix, "
                         "the paired tests (exact McNemar) and the hardest items.", EXAMPLE)
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run folders (a folder of runs stands for all of them)")
    parser.add_argument("--by", metavar="LABEL", help="also per value of an item label (e.g. foil_type, or subset), "
                                                      "Holm-corrected across the values")
    parser.add_argument("--json", action="store_true", help='print {"pairs": [...], "items": [...]} as JSON')
    parser.add_argument("--top", type=int, default=10, help="hardest items to list (default 10)")
    parser.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    parser.set_defaults(func=run)
