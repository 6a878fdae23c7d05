"""Which words of a text differ from the other texts of its item (for highlighting caption vs foils)."""

from __future__ import annotations

import difflib
import re
from typing import Sequence

TOKEN = re.compile(r"\S+")


def changed_words(text: str, others: Sequence[str]) -> list[tuple[str, bool]]:
    """``text`` split into words, each marked True when it is not matched in order in at least one of ``others``
    (a swapped or reordered word counts as changed)."""
    words = TOKEN.findall(text)
    changed = [False] * len(words)
    for other in others:
        matcher = difflib.SequenceMatcher(a=[w.lower() for w in words], b=[w.lower() for w in TOKEN.findall(other)],
                                          autojunk=False)
        kept = [False] * len(words)
        for block in matcher.get_matching_blocks():
            for i in range(block.a, block.a + block.size):
                kept[i] = True
        changed = [c or not k for c, k in zip(changed, kept)]
    return list(zip(words, changed))


def item_diff(texts: Sequence[str], true: Sequence[int] = (0,)) -> list[list[tuple[str, bool]]]:
    """Each true text against the false ones and each foil against the true ones (``true``: indices of the texts
    true of some clip); when every text is true of some clip (Vinoground), each against all the others."""
    true_set = set(true)
    out = []
    for i, text in enumerate(texts):
        others = [o for j, o in enumerate(texts) if j != i and (j in true_set) != (i in true_set)]
        out.append(changed_words(text, others or [o for j, o in enumerate(texts) if j != i]))
    return out
