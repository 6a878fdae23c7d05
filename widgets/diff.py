"""Which words of a text differ from the other texts of its item (for highlighting caption vs foils).

Texts are aligned word by word: the words matched are a longest common subsequence of the two word lists (compared
in lower case, without surrounding punctuation), and among the longest ones the alignment whose matched words moved
least. So a swap ("the man pushes the woman" / "the woman pushes the man") marks exactly the swapped words, not the
words between them, and a replaced or inserted word marks that word only.
"""

from __future__ import annotations

import re
import string
from typing import Sequence

TOKEN = re.compile(r"\S+")


def _key(word: str) -> str:
    return word.strip(string.punctuation).lower() or word


def aligned(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """The pairs (i, j) of words ``a[i]`` and ``b[j]`` matched: a longest common subsequence of the word keys, the
    one with the least total displacement ``sum |i - j|`` among the longest."""
    ka, kb = [_key(w) for w in a], [_key(w) for w in b]
    n, m = len(ka), len(kb)
    best = [[(0, 0)] * (m + 1) for _ in range(n + 1)]  # (matches, -displacement) of a[i:] against b[j:]
    for i in range(n - 1, -1, -1):
        row, below = best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            value = max(below[j], row[j + 1])
            if ka[i] == kb[j]:
                k, d = below[j + 1]
                value = max(value, (k + 1, d - abs(i - j)))
            row[j] = value
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if ka[i] == kb[j] and best[i][j] == (best[i + 1][j + 1][0] + 1, best[i + 1][j + 1][1] - abs(i - j)):
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def changed_words(text: str, others: Sequence[str]) -> list[tuple[str, bool]]:
    """``text`` split into words, each marked True when it is left unmatched against at least one of ``others``."""
    words = TOKEN.findall(text)
    changed = [False] * len(words)
    for other in others:
        kept = {i for i, _ in aligned(words, TOKEN.findall(other))}
        changed = [c or i not in kept for i, c in enumerate(changed)]
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
