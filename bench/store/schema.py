"""The score tables every scorer and importer writes, and every metric reads.

``pair`` table: one row per (item, clip, text) scored.
    item_id  str    the item
    clip     int    clip index in the item (-1 for text-only scorers, which see no video)
    text     int    text index in the item
    score    float  higher means "more likely true": a similarity, P(Yes)/(P(Yes)+P(No)), a log-likelihood sum,
                    or a negated perplexity; the run's manifest names which (``measure``)
    logit_yes, logit_no   float  raw next-token logits of the entailment answer tokens (NaN if not entailment)
    loglik_mean  float  mean token log-likelihood (NaN if not text scoring)
    n_tokens     float  scored tokens (NaN if not text scoring)
    answer   str    the raw answer text of an imported closed model ("" when none)

``choice`` table: one row per multiple-choice question asked (A/B letters, every option order).
    item_id  str
    axis     str    "text": choose among texts for one clip; "video": choose among clips for one text
    query    int    the clip index (axis "text") or the text index (axis "video")
    options  list[int]    the option indices in letter order (options[0] is "A")
    logits   list[float]  the letter logits in the same order (NaN when imported)
    choice   int    the option index chosen (-1 when the answer could not be parsed)
    answer   str    the raw answer text of an imported closed model ("" when none)

``failures`` table: item_id, stage, reason; items that could not be scored, never silently dropped.

``scored`` table (the run's bookkeeping, ``Run.scored``): one row per item a chunk covers, scored or failed.
    item_id  str
    frames   str    JSON ``{clip key: [frame indices]}`` the item was scored on (``"0"``, ``"0+1"`` for joined clips)
    notes    str    JSON list of frame notes (a clip shorter than the policy asks, a window clipped...)
    chunk    int    the chunk: the item's position in the run's item order divided by the chunk size
    launch   str    the launch that scored it (``manifest.json`` lists the launches with their world size)
    rank     int    the rank of that launch that scored it
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa

PAIR_COLUMNS: dict[str, str] = {
    "item_id": "object",
    "clip": "int64",
    "text": "int64",
    "score": "float64",
    "logit_yes": "float64",
    "logit_no": "float64",
    "loglik_mean": "float64",
    "n_tokens": "float64",
    "answer": "object",
}
CHOICE_COLUMNS: dict[str, str] = {
    "item_id": "object",
    "axis": "object",
    "query": "int64",
    "options": "object",
    "logits": "object",
    "choice": "int64",
    "answer": "object",
}
FAILURE_COLUMNS: dict[str, str] = {"item_id": "object", "stage": "object", "reason": "object"}
SCORED_COLUMNS: dict[str, str] = {"item_id": "object", "frames": "object", "notes": "object", "chunk": "int64",
                                  "launch": "object", "rank": "int64"}
ARROW_SCHEMAS: dict[str, pa.Schema] = {
    "pair": pa.schema([("item_id", pa.string()), ("clip", pa.int64()), ("text", pa.int64()), ("score", pa.float64()),
                       ("logit_yes", pa.float64()), ("logit_no", pa.float64()), ("loglik_mean", pa.float64()),
                       ("n_tokens", pa.float64()), ("answer", pa.string())]),
    "choice": pa.schema([("item_id", pa.string()), ("axis", pa.string()), ("query", pa.int64()),
                         ("options", pa.list_(pa.int64())), ("logits", pa.list_(pa.float64())),
                         ("choice", pa.int64()), ("answer", pa.string())]),
    "failures": pa.schema([("item_id", pa.string()), ("stage", pa.string()), ("reason", pa.string())]),
    "scored": pa.schema([("item_id", pa.string()), ("frames", pa.string()), ("notes", pa.string()),
                         ("chunk", pa.int64()), ("launch", pa.string()), ("rank", pa.int64())]),
}
AXES = ("text", "video")
MEASURES = ("similarity", "p_yes", "loglik_sum", "neg_perplexity", "answer", "letter_logits")

_PAIR_DEFAULTS: dict[str, Any] = {
    "logit_yes": math.nan,
    "logit_no": math.nan,
    "loglik_mean": math.nan,
    "n_tokens": math.nan,
    "answer": "",
}
_CHOICE_DEFAULTS: dict[str, Any] = {"answer": ""}


def _frame(rows: Iterable[Mapping[str, Any]], columns: dict[str, str], defaults: dict[str, Any]) -> pd.DataFrame:
    records = [{**defaults, **row} for row in rows]
    for i, rec in enumerate(records):
        missing = [c for c in columns if c not in rec]
        if missing:
            raise ValueError(f"score row {i} lacks column(s) {missing}: {dict(rec)!r}")
        extra = [c for c in rec if c not in columns]
        if extra:
            raise ValueError(f"score row {i} has unknown column(s) {extra}")
    df = pd.DataFrame.from_records(records, columns=list(columns))
    return df.astype(columns) if len(df) else pd.DataFrame({c: pd.Series(dtype=t) for c, t in columns.items()})


def pair_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A pair table from row dicts (optional columns default to NaN / "")."""
    return _frame(rows, PAIR_COLUMNS, _PAIR_DEFAULTS)


def choice_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A choice table from row dicts; ``options`` and ``logits`` are lists of equal length."""
    df = _frame(rows, CHOICE_COLUMNS, _CHOICE_DEFAULTS)
    for i, (opts, logits, axis, choice) in enumerate(zip(df["options"], df["logits"], df["axis"], df["choice"])):
        if len(opts) != len(logits):
            raise ValueError(f"choice row {i}: {len(opts)} options but {len(logits)} logits")
        if axis not in AXES:
            raise ValueError(f"choice row {i}: axis must be one of {AXES}, got {axis!r}")
        if choice != -1 and choice not in opts:
            raise ValueError(f"choice row {i}: choice {choice} is not among the options {list(opts)}")
    df["options"] = [list(map(int, o)) for o in df["options"]]
    df["logits"] = [list(map(float, lg)) for lg in df["logits"]]
    return df


def failure_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A failures table from row dicts."""
    return _frame(rows, FAILURE_COLUMNS, {})


def choose(options: list[int], logits: list[float]) -> int:
    """The option with the highest letter logit (the first on ties, as greedy decoding would)."""
    return int(options[int(np.argmax(logits))])
