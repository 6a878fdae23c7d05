"""A remote model's responses, kept in its run folder as they arrive (``responses.jsonl``), so that an answer paid for
is never lost to a kill and never asked for again.

One JSON object per line, appended and flushed the moment a response arrives (before the chunk it belongs to is
stored): ``key`` (the request's content hash, :func:`bench.scoring.api.messages.request_key`), what was asked
(``item_id``, ``video``, ``question``), what came back (``text``, ``refusal``, ``finish_reason``, the answer
position's ``top_logprobs``), the ``usage`` the server reported, the returned ``model`` id and ``system_fingerprint``,
and how it went (``attempts``, ``faults`` met on the way, ``seconds``, ``time``). No request header is kept, so no
key. A kill can tear the last line; the next writer cuts it off, and a reader skips it.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from pathlib import Path

RESPONSES = "responses.jsonl"


def _lines(path: Path) -> tuple[list[dict], int]:
    """The complete records of ``path`` and the byte length they take (a torn last line left out)."""
    if not path.is_file():
        return [], 0
    data = path.read_bytes()
    whole = data[:data.rfind(b"\n") + 1]
    records = []
    for line in whole.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records, len(whole)


def read_responses(folder: str | Path) -> list[dict]:
    """Every complete response record of the run folder ``folder``, in the order they arrived."""
    return _lines(Path(folder) / RESPONSES)[0]


class ResponseLog:
    """The responses of one run folder by request key; :meth:`add` appends and flushes one at once (thread-safe)."""

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / RESPONSES
        self._lock = threading.Lock()
        records, length = _lines(self.path)
        if self.path.is_file() and self.path.stat().st_size != length:
            with open(self.path, "r+b") as fh:  # a line torn by a kill: cut off before anything is appended
                fh.truncate(length)
        self._records = {r["key"]: r for r in records if "key" in r}

    def __len__(self) -> int:
        return len(self._records)

    def records(self) -> list[dict]:
        """The stored responses (the last one of each key), in the order they arrived."""
        return list(self._records.values())

    def get(self, key: str) -> dict | None:
        """The response stored for ``key``, or None."""
        return self._records.get(key)

    def add(self, record: dict) -> None:
        """Append ``record`` (with its ``key``) and flush it to the file before returning."""
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            self._records[record["key"]] = record


def usage_totals(records: list[dict]) -> dict:
    """What ``records`` add up to: responses, attempts and faults met, tokens used (as the server reported them), and
    the model ids and system fingerprints returned (with how many responses each)."""
    tokens = Counter()
    for r in records:
        for name, value in (r.get("usage") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                tokens[name] += value
    return {"responses": len(records), "attempts": sum(int(r.get("attempts", 1)) for r in records),
            "faults": dict(Counter(f for r in records for f in r.get("faults", ())).most_common()),
            "tokens": dict(tokens),
            "models": dict(Counter(str(r.get("model")) for r in records).most_common()),
            "system_fingerprints": dict(Counter(str(r.get("system_fingerprint")) for r in records
                                                if r.get("system_fingerprint")).most_common())}
