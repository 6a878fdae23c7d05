"""Decoding ahead of the consumer on worker threads (decord and FFmpeg release the GIL while decoding)."""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Hashable, Iterable, Iterator, TypeVar

from bench.frames.decode import FrameError

K = TypeVar("K", bound=Hashable)


def prefetch(requests: Iterable[tuple[K, Callable[[], object]]], workers: int = 2,
             queue_size: int = 8) -> Iterator[tuple[K, object]]:
    """Run each request's loader on ``workers`` threads, at most ``queue_size`` ahead of the consumer, and yield
    ``(key, result)`` in request order; a :class:`FrameError` (or any error of a loader) is yielded as a
    :class:`FrameError` value so the other requests go on. Closing the generator cancels what is still queued.
    """
    pending: deque[tuple[K, Future]] = deque()
    source = iter(requests)
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="frames") as pool:
        try:
            for key, load in source:
                pending.append((key, pool.submit(load)))
                if len(pending) >= queue_size:
                    yield _result(*pending.popleft())
            while pending:
                yield _result(*pending.popleft())
        finally:
            for _, future in pending:
                future.cancel()


def _result(key, future: Future):
    try:
        return key, future.result()
    except FrameError as err:
        return key, err
    except Exception as err:  # a decoder bug must not end the whole run: report it as this item's failure
        return key, FrameError(str(key), f"{type(err).__name__}: {err}")
