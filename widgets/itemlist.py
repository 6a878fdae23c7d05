"""The item list: a table of items with one column group per run (correct or not, margin); clicking a row selects
the item, clicking a column title sorts by it (an anywidget; the rows arrive already sorted and formatted)."""

from __future__ import annotations

import anywidget
import traitlets

from widgets.assets import STYLE, module


class ItemList(anywidget.AnyWidget):
    """``columns``: ``{"key", "title", "group", "kind"}`` each (kind "text", "correct" or "number"); ``rows``:
    ``{"id", "cells"}`` each, cells as display strings in column order; ``selected``: the selected row's id;
    ``sort``: ``[key, descending]``, set by clicking a column title."""

    _esm = module("itemlist.js")
    _css = STYLE
    columns = traitlets.List().tag(sync=True)
    rows = traitlets.List().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    sort = traitlets.List(["order", False]).tag(sync=True)
