"""The pair viewer: one item's clip(s) beside its texts and every run's scores (an anywidget)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import anywidget
import traitlets

from bench.frames import FrameError
from bench.items import Item
from bench.metrics.dispatch import item_correct
from bench.store import Run
from widgets.diff import item_diff
from widgets.proxy import ProxyServer, RefusedFile, make_proxy

HERE = Path(__file__).parent


def clip_state(item: Item, run: Run | None, server: ProxyServer | None, folder: Path | None) -> list[dict]:
    """Per clip: the proxy URL (or the reason there is none), its duration, and the sampled frame times on it."""
    from bench.frames import decode

    sampled: dict = {}
    if run is not None and run.frames is not None and len(run.frames):
        rows = run.frames[run.frames["item_id"] == item.item_id]
        sampled = json.loads(rows["frames"].iloc[0]) if len(rows) else {}
    states = []
    for c, clip in enumerate(item.clips):
        state = {"url": "", "error": "", "duration": 0.0, "sampled": []}
        try:
            path, offset = make_proxy(clip, folder)
            count, fps = decode.probe(str(path))
            state.update(url=server.url(path) if server else str(path), duration=count / fps)
            _, source_fps = decode.probe(clip.path)
            state["sampled"] = [i / source_fps - offset for i in sampled.get(str(c), [])]
        except FrameError as err:
            state["error"] = err.reason
        except RefusedFile as err:
            state["error"] = str(err)
        states.append(state)
    return states


def text_state(item: Item) -> list[dict]:
    """Per text: its words with the changed ones flagged, and the clips it is true of."""
    true = sorted({t for row in item.truth for t in row})
    return [{"index": i, "words": [list(w) for w in words], "true_of": [c for c, row in enumerate(item.truth) if i in row]}
            for i, words in enumerate(item_diff(item.texts, true))]


def run_state(item: Item, runs: Sequence[Run], correct: dict[str, dict]) -> list[dict]:
    """Per run: its scores for the item as short strings and its per-metric correctness."""
    states = []
    for run in runs:
        label = run.label
        scores = []
        pair = run.pair[run.pair["item_id"] == item.item_id]
        for r in pair.itertuples():
            scores.append(f"c{r.clip}·t{r.text}={r.score:.3f}" if r.clip >= 0 else f"t{r.text}={r.score:.3f}")
        choice = run.choice[run.choice["item_id"] == item.item_id]
        for r in choice.itertuples():
            letters = "ABCDEFGHIJ"[:len(r.options)]
            picked = letters[list(r.options).index(r.choice)] if r.choice in list(r.options) else "?"
            scores.append(f"{r.axis}{r.query}:{[int(o) for o in r.options]}→{picked}")
        states.append({"run": label, "scores": scores, "correct": correct.get(label, {})})
    return states


class PairViewer(anywidget.AnyWidget):
    """Shows one item: video(s) with play/pause, scrubbing and sampled-frame ticks, texts with changed words marked,
    and each run's scores and correctness. Arrow keys (or j/k) ask the item browser for the next/previous item."""

    _esm = HERE / "viewer.js"
    _css = HERE / "viewer.css"
    item = traitlets.Dict().tag(sync=True)
    clips = traitlets.List().tag(sync=True)
    texts = traitlets.List().tag(sync=True)
    twin = traitlets.List().tag(sync=True)
    runs = traitlets.List().tag(sync=True)

    def __init__(self, runs: Sequence[Run] = (), *, serve: bool = True, proxy_folder: Path | None = None, **kwargs):
        super().__init__(**kwargs)
        self.run_list = list(runs)
        self.proxy_folder = proxy_folder
        self.serve = serve
        self._navigate: list[Callable[[str], None]] = []
        self.on_msg(self._message)

    @property
    def server(self) -> ProxyServer | None:
        """The kernel's proxy server (one for every viewer and proxy folder; restarted if it died), or ``None`` when
        not serving."""
        return ProxyServer.shared() if self.serve else None

    def _message(self, _widget, content, _buffers) -> None:
        for callback in self._navigate:
            callback(content.get("event", ""))

    def on_navigate(self, callback: Callable[[str], None]) -> None:
        """Call ``callback("next" | "previous")`` on the viewer's keyboard navigation."""
        self._navigate.append(callback)

    def show(self, item: Item, correct: dict[str, dict] | None = None, twin: Item | None = None) -> None:
        """Display ``item`` (``correct``: run label -> {metric: 0/1/None}; computed here when not given) and, for
        ViLMA, its proficiency ``twin``'s caption and foils."""
        if correct is None:
            correct = {}
            for run in self.run_list:
                wide = item_correct([item], run.pair, run.choice)
                row = wide.loc[item.item_id] if item.item_id in wide.index else {}
                correct[run.label] = {m: (None if v != v else int(v)) for m, v in dict(row).items()}
        first = self.run_list[0] if self.run_list else None
        self.texts = text_state(item)
        self.twin = text_state(twin) if twin is not None else []
        self.clips = clip_state(item, first, self.server, self.proxy_folder)
        self.runs = run_state(item, self.run_list, correct)
        self.item = {"item_id": item.item_id, "benchmark": item.benchmark, "subset": item.subset}
