"""What scoring prints while it works: a progress bar on a terminal or in a notebook, a few progress lines in a log
(stderr not a terminal), and none of transformers' own bars (its "Loading weights" bar) inside a command's output."""

from __future__ import annotations

import sys
import time

from tqdm.std import tqdm as std_tqdm

LINE_EVERY_S = 30.0     # a log gets a progress line at least this often...
LINE_EVERY_SHARE = 0.1  # ...and one per tenth of the work
LINE_FORMAT = "{desc}: {n_fmt}/{total_fmt} {unit}s ({percentage:.0f} %), {elapsed} elapsed, {remaining} left{postfix}"


class LineProgress(std_tqdm):
    """A progress bar for logs: one plain line per tenth of the total or per :data:`LINE_EVERY_S`, and one at the
    end; no redraws."""

    def __init__(self, *args, **kwargs):
        self._line_n: float | None = None
        self._line_t = 0.0
        kwargs.setdefault("bar_format", LINE_FORMAT)
        super().__init__(*args, **kwargs)

    def _line(self) -> None:
        self.fp.write(str(self) + "\n")
        self.fp.flush()
        self._line_n, self._line_t = self.n, time.monotonic()

    def display(self, msg=None, pos=None) -> bool:
        if msg == "":  # tqdm clearing its line: nothing was drawn
            return True
        step = LINE_EVERY_SHARE * (self.total or 0)
        if (self._line_n is None or (step and self.n - self._line_n >= step)
                or time.monotonic() - self._line_t >= LINE_EVERY_S):
            self._line()
        return True

    def close(self) -> None:
        if self.disable:
            return
        if self._line_n != self.n:
            self._line()
        self.disable = True
        self._decr_instances(self)


def _in_notebook(bar: type) -> bool:
    return any(c.__module__ == "tqdm.notebook" for c in bar.__mro__)


def progress_bar(**kwargs) -> std_tqdm:
    """A tqdm bar (``tqdm.auto``'s) in a notebook or on a terminal; :class:`LineProgress` when stderr is a file or
    a pipe."""
    from tqdm.auto import tqdm

    if _in_notebook(tqdm) or kwargs.get("disable") or sys.stderr.isatty():
        return tqdm(**kwargs)
    return LineProgress(file=sys.stderr, **kwargs)


def quiet_library_bars() -> None:
    """Turn off transformers' own progress bars (the "Loading weights" bar of every model load) in this process;
    downloads from the hub keep theirs."""
    from transformers.utils import logging

    if hasattr(logging, "set_tqdm_hook"):
        logging.set_tqdm_hook(lambda factory, args, kwargs: factory(*args, **{**kwargs, "disable": True}))
    else:
        logging.disable_progress_bar()
