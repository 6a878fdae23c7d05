"""Widgets for error analysis: the pair viewer, the item browser and plots linked to them."""

from widgets.browser import ItemBrowser
from widgets.viewer import PairViewer

__all__ = ["ItemBrowser", "PairViewer"]
