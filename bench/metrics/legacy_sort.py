"""numpy's ``argsort`` order before numpy 1.25, for reproducing tie orders of released evaluation scripts.

``np.argsort`` (default ``kind="quicksort"``) does not promise an order among equal values, and the order changed in
numpy 1.25, when the default sort began dispatching to SIMD implementations (x86-simd-sort, Highway). Scripts such as
VideoCon's ``src/calc_ssv2.py`` rank with ``np.argsort(-pred)`` over scores with many ties, so their result depends on
that order: the released Owl-Con scores give mAP 15.20 with numpy 1.24 (the paper's Table 4 prints 15.2) and 15.51
with numpy 2.x on the same file.

:func:`introsort_argsort` is the introsort numpy <= 1.24 used for ``argsort`` of floating-point arrays on every CPU:
median-of-three quicksort partitions, the smaller side first and the larger pushed on a stack, insertion sort below
16 elements, and heapsort once the depth budget (twice floor(log2 n) partitions) runs out. NaN sorts last.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

SMALL_QUICKSORT = 15


def _less(a: float, b: float) -> bool:
    """numpy's float order: NaN after every number."""
    return a < b or (b != b and a == a)


def _heapsort(v: Sequence[float], idx: list[int], lo: int, n: int) -> None:
    """Heapsort of ``idx[lo:lo + n]`` by ``v`` (1-based heap over that slice)."""
    def at(i: int) -> int:
        return idx[lo + i - 1]

    def put(i: int, value: int) -> None:
        idx[lo + i - 1] = value

    def sift_down(moving: int, i: int, size: int) -> None:
        j = i << 1
        while j <= size:
            if j < size and _less(v[at(j)], v[at(j + 1)]):
                j += 1
            if _less(v[moving], v[at(j)]):
                put(i, at(j))
                i, j = j, j + j
            else:
                break
        put(i, moving)

    for start in range(n >> 1, 0, -1):
        sift_down(at(start), start, n)
    while n > 1:
        moving = at(n)
        put(n, at(1))
        n -= 1
        sift_down(moving, 1, n)


def introsort_argsort(values: Sequence[float]) -> np.ndarray:
    """The indices that sort ``values`` ascending, in the order numpy <= 1.24's ``np.argsort`` returns them."""
    v = [float(x) for x in values]
    n = len(v)
    idx = list(range(n))
    if n < 2:
        return np.asarray(idx, dtype=np.int64)
    stack: list[tuple[int, int, int]] = []
    left, right = 0, n - 1
    depth = 2 * (n.bit_length() - 1)
    while True:
        if depth < 0:
            _heapsort(v, idx, left, right - left + 1)
        else:
            while right - left > SMALL_QUICKSORT:
                mid = left + ((right - left) >> 1)
                if _less(v[idx[mid]], v[idx[left]]):
                    idx[mid], idx[left] = idx[left], idx[mid]
                if _less(v[idx[right]], v[idx[mid]]):
                    idx[right], idx[mid] = idx[mid], idx[right]
                if _less(v[idx[mid]], v[idx[left]]):
                    idx[mid], idx[left] = idx[left], idx[mid]
                pivot = v[idx[mid]]
                i, j = left, right - 1
                idx[mid], idx[j] = idx[j], idx[mid]
                while True:
                    i += 1
                    while _less(v[idx[i]], pivot):
                        i += 1
                    j -= 1
                    while _less(pivot, v[idx[j]]):
                        j -= 1
                    if i >= j:
                        break
                    idx[i], idx[j] = idx[j], idx[i]
                idx[i], idx[right - 1] = idx[right - 1], idx[i]
                depth -= 1
                if i - left < right - i:
                    stack.append((i + 1, right, depth))
                    right = i - 1
                else:
                    stack.append((left, i - 1, depth))
                    left = i + 1
            for i in range(left + 1, right + 1):
                moving = idx[i]
                j = i
                while j > left and _less(v[moving], v[idx[j - 1]]):
                    idx[j] = idx[j - 1]
                    j -= 1
                idx[j] = moving
        if not stack:
            break
        left, right, depth = stack.pop()
    return np.asarray(idx, dtype=np.int64)
