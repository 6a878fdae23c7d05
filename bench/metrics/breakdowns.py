"""Breakdowns the figures use: accuracy by video-length bin, by frames sampled, by category; and ViLMA's bias check,
the word-frequency distributions of captions versus foils and their Jensen-Shannon divergence."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from bench.config import Manifest
from bench.items import Item
from bench.metrics.aggregate import Settings, summarize, summarize_group, with_labels

LENGTH_BINS = (0.0, 5.0, 10.0, 20.0, 30.0, 60.0, math.inf)
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def by_category(outcomes: pd.DataFrame, items: Sequence[Item], label: str,
                settings: Settings = Settings()) -> pd.DataFrame:
    """Each metric per value of the item label ``label`` (list labels count under each value)."""
    table = summarize(with_labels(outcomes, items, [label]), settings, by=[label])
    return table[table["by"] == label].reset_index(drop=True)


def item_duration(item: Item, durations: Mapping[str, float] | None = None) -> float | None:
    """Seconds of video the item shows: the mean over its clips of the window length, or of the file's length from
    ``durations`` (video path -> seconds) when the window is open; ``None`` when unknown."""
    lengths = []
    for clip in item.clips:
        start, end = clip.window_seconds()
        if end is None:
            end = (durations or {}).get(clip.path)
        if end is not None:
            lengths.append(end - (start or 0.0))
    return float(np.mean(lengths)) if lengths else None


def _nice_step(span: float) -> float:
    """The round step (1, 2 or 5 times a power of ten) nearest above ``span``."""
    power = 10.0 ** math.floor(math.log10(span))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= span - 1e-12)


def length_edges(items: Sequence[Item], durations: Mapping[str, float] | None = None, most: int = 4) -> list[float]:
    """Video-length bin edges that follow the data: at most ``most`` bins between the shortest and the longest item,
    every bin holding some item, edges on a round step: one bin per length when there are at most ``most`` lengths,
    else bins of about equal item counts (quantiles). No known length gives :data:`LENGTH_BINS`."""
    seconds = np.array([s for s in (item_duration(it, durations) for it in items if it.role == "main")
                        if s is not None and math.isfinite(s)], float)
    if not len(seconds):
        return list(LENGTH_BINS)
    low, high = float(seconds.min()), float(seconds.max())
    step = _nice_step((high - low) / (4 * most) if high > low else max(high, 1e-3) / 10)

    def rounded(x: float) -> float:
        return float(f"{x:.6g}")

    first, last = rounded(math.floor(low / step) * step), rounded((math.floor(high / step) + 1) * step)
    edges = [first]
    distinct = np.unique(seconds)
    cuts = ((distinct[:-1] + distinct[1:]) / 2 if len(distinct) <= most
            else np.quantile(seconds, np.linspace(0, 1, most + 1)[1:-1]))
    for edge in sorted({rounded(round(q / step) * step) for q in cuts}):
        if edges[-1] < edge < last and ((seconds >= edges[-1]) & (seconds < edge)).any() and (seconds >= edge).any():
            edges.append(edge)
    return edges + [last]


def bin_labels(bins: Sequence[float]) -> list[str]:
    """The labels of bins with these edges, in order: ``["[0, 5) s", "[5, 10) s", ...]``."""
    return [f"[{lo:g}, {hi:g}) s" for lo, hi in zip(bins[:-1], bins[1:])]


def length_bins(items: Sequence[Item], bins: Sequence[float] = LENGTH_BINS,
                durations: Mapping[str, float] | None = None) -> pd.Series:
    """Each item's video-length bin label (``"[5, 10) s"``), or ``"unknown"``; indexed by item id. Give the edges
    of :func:`length_edges` for bins that follow the data."""
    edges = list(bins)
    if sorted(edges) != edges or len(edges) < 2:
        raise ValueError(f"bins must be at least two increasing edges, got {edges}")
    labels = {}
    for it in items:
        seconds = item_duration(it, durations)
        label = "unknown"
        if seconds is not None:
            for low, high in zip(edges[:-1], edges[1:]):
                if low <= seconds < high:
                    label = f"[{low:g}, {high:g}) s"
                    break
            else:
                label = "outside bins"
        labels[it.item_id] = label
    return pd.Series(labels, name="length")


def by_length(outcomes: pd.DataFrame, items: Sequence[Item], bins: Sequence[float] = LENGTH_BINS,
              durations: Mapping[str, float] | None = None, settings: Settings = Settings()) -> pd.DataFrame:
    """Each metric per video-length bin (bins in the order of ``bins``; "unknown" last)."""
    frame = outcomes.assign(length=outcomes["item_id"].map(length_bins(items, bins, durations)).fillna("unknown"))
    rows = []
    for (metric, length), group in frame.groupby(["metric", "length"], sort=False):
        rows.append(summarize_group(metric, "length", length, group, settings))
    table = pd.DataFrame(rows)
    order = {label: i for i, label in enumerate(bin_labels(bins))}
    key = table["subset"].map(lambda s: order.get(s, len(order)))
    return table.assign(_key=key).sort_values(["metric", "_key"], kind="stable").drop(columns="_key").reset_index(
        drop=True)


def frames_sampled(frame_policy: Mapping | None) -> int | None:
    """How many frames a policy (its ``describe()`` dict from a run manifest) gives each clip; ``None`` when it
    depends on the clip's length (``fps`` without a cap, ``second_middles``, ``quarter_seconds``)."""
    if not frame_policy:
        return None
    name = frame_policy.get("name")
    if name == "none":
        return 0
    if name == "single":
        return 1
    if name in ("uniform", "segment_midpoints", "consecutive"):
        return int(frame_policy["k"])
    if name == "fps" and frame_policy.get("max_frames"):
        return int(frame_policy["max_frames"])
    return None


def by_frames(runs: Iterable[tuple[Manifest, pd.DataFrame]], metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """The overall rows of several runs' metric tables against the number of frames each run sampled.

    ``runs`` holds ``(manifest, table)`` pairs (tables from :func:`bench.metrics.dispatch.metric_table` or
    ``run_table``); the result has a ``frames`` column (``None`` when the policy's count varies) and is sorted by it.
    """
    parts = []
    for manifest, table in runs:
        overall = table[table["by"] == "all"]
        if metrics is not None:
            overall = overall[overall["metric"].isin(metrics)]
        parts.append(overall.assign(frames=frames_sampled(manifest.frame_policy),
                                    run=manifest.name))
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values(["metric", "frames"], kind="stable", na_position="last").reset_index(drop=True)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits, with an apostrophe suffix kept: "man's")."""
    return WORD.findall(text.lower())


def caption_foil_words(items: Iterable[Item]) -> pd.DataFrame:
    """Word counts in the true texts (captions) and the false texts (foils) of main items, with their normalised
    frequencies; sorted by total count."""
    captions: Counter = Counter()
    foils: Counter = Counter()
    for it in items:
        if it.role != "main":
            continue
        true = {t for row in it.truth for t in row}
        for t, text in enumerate(it.texts):
            (captions if t in true else foils).update(words(text))
    vocab = sorted(set(captions) | set(foils))
    frame = pd.DataFrame({"word": vocab, "caption": [captions[w] for w in vocab], "foil": [foils[w] for w in vocab]})
    for column in ("caption", "foil"):
        total = frame[column].sum()
        frame[f"{column}_freq"] = frame[column] / total if total else 0.0
    return frame.assign(_n=frame["caption"] + frame["foil"]).sort_values(
        ["_n", "word"], ascending=[False, True]).drop(columns="_n").reset_index(drop=True)


def jensen_shannon(p: Sequence[float], q: Sequence[float], base: float = 2.0) -> float:
    """ViLMA's Jensen-Shannon divergence (App. B, "Bias check"): sqrt((KL(f||m) + KL(c||m)) / 2), m = (f + c) / 2.

    ``p`` and ``q`` are counts or frequencies over the same vocabulary (normalised here); with ``base`` 2 the value
    lies in [0, 1]: 0 for identical distributions, 1 for disjoint ones.
    """
    a, b = np.asarray(p, float), np.asarray(q, float)
    if a.shape != b.shape:
        raise ValueError(f"distributions over different vocabularies: {a.shape} vs {b.shape}")
    if np.any(a < 0) or np.any(b < 0) or a.sum() == 0 or b.sum() == 0:
        raise ValueError("distributions must be non-negative and not all zero")
    a, b = a / a.sum(), b / b.sum()
    m = (a + b) / 2

    def kl(x: np.ndarray) -> float:
        nz = x > 0
        return float(np.sum(x[nz] * np.log(x[nz] / m[nz])) / math.log(base))

    return math.sqrt(max(0.0, (kl(a) + kl(b)) / 2))


def caption_foil_divergence(items: Sequence[Item], by: str = "subset") -> pd.DataFrame:
    """Jensen-Shannon divergence of caption versus foil word frequencies per value of ``by`` ("subset" or a label),
    with the number of items and of distinct words."""
    groups: dict[str, list[Item]] = {}
    for it in items:
        if it.role != "main":
            continue
        key = it.subset if by == "subset" else it.labels.get(by)
        groups.setdefault(str(key), []).append(it)
    rows = []
    for key, members in groups.items():
        freq = caption_foil_words(members)
        rows.append({by: key, "js": jensen_shannon(freq["caption"], freq["foil"]), "n_items": len(members),
                     "n_words": len(freq)})
    return pd.DataFrame(rows, columns=[by, "js", "n_items", "n_words"])


def validation_counts(items: Iterable[Item]) -> pd.DataFrame:
    """ViLMA's validation statistics per subset from the released votes (loaded with ``valid_only=False``): items,
    valid (the official filter), unanimous (all 3 annotators chose the caption), and the valid share."""
    rows: dict[str, dict] = {}
    for it in items:
        if it.role != "main":
            continue
        row = rows.setdefault(it.subset, {"subset": it.subset, "items": 0, "valid": 0, "unanimous": 0})
        row["items"] += 1
        row["valid"] += bool(it.labels.get("valid"))
        row["unanimous"] += it.labels.get("mturk_caption") == 3
    table = pd.DataFrame(list(rows.values()), columns=["subset", "items", "valid", "unanimous"])
    return table.assign(valid_share=table["valid"] / table["items"])


def changed_words(items: Iterable[Item]) -> pd.DataFrame:
    """For each main item, the words its caption has that its first foil lacks and vice versa (the "verb pairs" of
    VITATECS Fig. 3 when one word changes), counted: columns caption_words, foil_words, n."""
    pairs: dict[tuple[str, str], int] = {}
    for it in items:
        if it.role != "main" or len(it.texts) < 2:
            continue
        caption, foil = words(it.texts[0]), words(it.texts[1])
        only_caption = " ".join(w for w in caption if w not in foil)
        only_foil = " ".join(w for w in foil if w not in caption)
        if only_caption or only_foil:
            key = (only_caption, only_foil)
            pairs[key] = pairs.get(key, 0) + 1
    table = pd.DataFrame([(a, b, n) for (a, b), n in pairs.items()], columns=["caption_words", "foil_words", "n"])
    return table.sort_values("n", ascending=False, kind="stable").reset_index(drop=True)


def counts(items: Iterable[Item], rows: str, columns: str | None = None) -> pd.DataFrame:
    """Main items per value of a label (``"subset"`` or a label name), optionally crossed with a second one; list
    labels (Vinoground's minor categories) count under each value."""
    def values(item: Item, key: str) -> list:
        value = item.subset if key == "subset" else item.labels.get(key)
        return list(value) if isinstance(value, (list, tuple)) else [value]

    records = [{rows: r, **({columns: c} if columns else {})}
               for it in items if it.role == "main" for r in values(it, rows)
               for c in (values(it, columns) if columns else [None])]
    frame = pd.DataFrame(records, columns=[rows] + ([columns] if columns else []))
    keys = [rows] + ([columns] if columns else [])
    return frame.groupby(keys, dropna=False, sort=False).size().rename("n").reset_index()
