"""The widgets' front-end code: each anywidget module is the shared DOM helpers (``dom.js``) followed by the
widget's own file."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
STYLE = HERE / "viewer.css"


def module(*names: str) -> str:
    """The ES module of the widget whose own code is ``widgets/<name>`` (the files in the order given)."""
    return "".join((HERE / name).read_text() for name in ("dom.js", *names))
