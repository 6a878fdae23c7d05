"""``KEY=VALUE`` text to a dict: the one parser of loader and backend options (``-o``, ``-b``) and of frame policy
parameters (``uniform:k=8,order=reverse``)."""

from __future__ import annotations

import json
from typing import Any, Iterable


def parse_pairs(pairs: Iterable[str], what: str = "option", context: str = "") -> dict[str, Any]:
    """``["key=value", ...]`` to a dict; values are read as JSON when they parse (true, 3, null), else kept as text.
    A pair without ``=`` or a key given twice is a one-line :class:`ValueError` naming ``what`` (and ``context``)."""
    found: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = (part.strip() for part in pair.partition("="))
        if not sep or not key:
            raise ValueError(f"{what} must look like KEY=VALUE, got {pair!r}{context}")
        if key in found:
            raise ValueError(f"{what} {key!r} given twice{context}")
        try:
            found[key] = json.loads(value)
        except json.JSONDecodeError:
            found[key] = value
    return found
