"""The widgets' front-end code: each anywidget module is the shared DOM helpers (``dom.js``) followed by the
widget's own file."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
STYLE = HERE / "viewer.css"


def module(name: str) -> str:
    """The ES module of the widget whose own code is ``widgets/<name>``."""
    return (HERE / "dom.js").read_text() + (HERE / name).read_text()
