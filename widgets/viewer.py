"""The pair viewer: one item's clip(s) beside its texts and every run's scores (an anywidget)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import anywidget
import pandas as pd
import traitlets

from bench.frames import FrameError
from bench.frames.controls import AS_IS, CONTROLS
from bench.items import Item
from bench.metrics.flags import RunScores, run_margins, run_outcomes
from bench.scoring.warm import MODELS, WarmModels
from bench.store import Run
from widgets.assets import STYLE, module
from widgets.describe import UNITS, choice_lines, number, score_lines, text_names
from widgets.diff import item_diff
from widgets.proxy import ProxyServer, RefusedFile, make_proxy
from widgets.whatif import fit_note, rescore, targets_of

NOT_SCORED = "not scored"


def clip_state(item: Item, run: Run | None, server: ProxyServer | None, folder: Path | None) -> list[dict]:
    """Per clip: the proxy URL (or the reason there is none), its duration, and the sampled frame times on it."""
    from bench.frames import decode

    sampled: dict = {}
    if run is not None and run.scored is not None and len(run.scored):
        rows = run.scored[run.scored["item_id"] == item.item_id]
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
    """Per text: its name (caption, foil...), its words with the changed ones flagged, and the clips it is true of."""
    true = sorted({t for row in item.truth for t in row})
    names = text_names(item)
    return [{"index": i, "name": names[i], "text": item.texts[i], "words": [list(w) for w in words],
             "true_of": [c for c, row in enumerate(item.truth) if i in row]}
            for i, words in enumerate(item_diff(item.texts, true))]


def run_state(item: Item, run: Run, outcomes: pd.DataFrame, margin: float, twin: Item | None = None) -> dict:
    """One run's view of an item: its scores or answers in words, its margin and its outcome on each metric that
    applies to it (``outcomes``: this run's rows of :func:`bench.metrics.flags.run_outcomes`; right only when the
    true text won outright, ``tie`` when a tie decided it)."""
    lines = score_lines(item, run.pair) + choice_lines(item, run.choice)
    if twin is not None:
        lines += score_lines(twin, run.pair, "proficiency ") + choice_lines(twin, run.choice, "proficiency ")
    mine = outcomes[outcomes["item_id"] == item.item_id]
    return {"run": run.label, "protocol": str(run.manifest.protocol),
            "unit": UNITS.get(run.manifest.measure, ""), "lines": lines, "margin": number(margin, signed=True),
            "correct": [{"metric": r.metric, "value": int(r.strict == 1) if r.status == "ok" else None,
                         "tie": bool(r.tie), "status": r.status} for r in mine.itertuples()]}


def not_scored_state(run: Run) -> dict:
    """A run's view of an item it was not asked: said so, with no outcome (never counted as wrong)."""
    return {"run": run.label, "protocol": str(run.manifest.protocol),
            "unit": UNITS.get(run.manifest.measure, ""), "margin": "–", "correct": [],
            "lines": [f"{NOT_SCORED}: this run was not asked this item"]}


class PairViewer(anywidget.AnyWidget):
    """Shows one item: video(s) with play/pause, scrubbing and sampled-frame ticks, texts with changed words marked,
    and each run's scores, margin and correctness. Arrow keys (or j/k) ask the item browser for the next/previous
    item.

    What if: edit a text or add a foil, pick a control and the models (default: the runs' models), and re-score;
    each model's new scores appear beside the stored ones as it answers. Models load once per kernel, lazily, and
    stay warm (``models``); a model too big for the memory free is named, not loaded. Probes are kept in
    ``probes.parquet`` in the data home (``keep``)."""

    _esm = module("whatif.js", "viewer.js")
    _css = STYLE
    item = traitlets.Dict().tag(sync=True)
    clips = traitlets.List().tag(sync=True)
    texts = traitlets.List().tag(sync=True)
    twin = traitlets.List().tag(sync=True)
    runs = traitlets.List().tag(sync=True)
    whatif = traitlets.Dict().tag(sync=True)
    probes = traitlets.List().tag(sync=True)
    probing = traitlets.Unicode().tag(sync=True)

    def __init__(self, runs: Sequence[Run] = (), *, serve: bool = True, proxy_folder: str | Path | None = None,
                 models: WarmModels = MODELS, keep: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.run_list = list(runs)
        self._asked_ids: dict[int, set[str]] = {}
        self.proxy_folder = Path(proxy_folder) if proxy_folder is not None else None
        self.serve = serve
        self.models = models
        self.keep = keep
        self.targets = targets_of(self.run_list)
        self.whatif = {"controls": [AS_IS, *CONTROLS],
                       "targets": [{"label": t.label, "note": fit_note(t, models)} for t in self.targets]}
        self.shown_item: Item | None = None
        self._navigate: list[Callable[[str], None]] = []
        self.on_msg(self._message)

    @property
    def server(self) -> ProxyServer | None:
        """The kernel's proxy server (one for every viewer and proxy folder; restarted if it died), or ``None`` when
        not serving."""
        return ProxyServer.shared() if self.serve else None

    def _asked(self, run: Run) -> set[str]:
        """The ids of the items ``run`` was asked (read once per run)."""
        if id(run) not in self._asked_ids:
            self._asked_ids[id(run)] = {it.item_id for it in run.items()}
        return self._asked_ids[id(run)]

    def _message(self, _widget, content, _buffers) -> None:
        if content.get("event") == "probe":
            self.probe(content.get("texts", []), content.get("control", AS_IS), content.get("targets"),
                       int(content.get("clip", 0)))
            return
        for callback in self._navigate:
            callback(content.get("event", ""))

    def probe(self, texts: Sequence[str], control: str = AS_IS, targets: Sequence[str] | None = None,
              clip: int = 0) -> list[dict]:
        """Re-score the shown item's ``clip`` with ``texts`` under ``control`` by the models labelled ``targets``
        (default: every model not too big); the rows (per model: scores, stored scores or the error) show as each
        model answers, and are returned."""
        if self.shown_item is None:
            raise ValueError("no item shown: show one before probing it")
        texts = [t.strip() for t in texts if t and t.strip()]
        notes = {t["label"]: t["note"] for t in self.whatif["targets"]}
        picked = [t for t in self.targets if (t.label in targets if targets is not None else not notes[t.label])]
        self.probes = []
        if not texts:
            self.probing = "nothing to score: every text is empty"
            return []

        def shown(row: dict) -> None:
            self.probes = [*self.probes, row]
            left = [t.label for t in picked[len(self.probes):]]
            self.probing = f"scoring with {left[0]}…" if left else f"done: {len(self.probes)} model(s), {control}"

        self.probing = f"scoring with {picked[0].label}…" if picked else "no model picked"
        rescore(self.shown_item, picked, texts, control, clip, self.models, self.keep, shown)
        return list(self.probes)

    def on_navigate(self, callback: Callable[[str], None]) -> None:
        """Call ``callback("next" | "previous")`` on the viewer's keyboard navigation."""
        self._navigate.append(callback)

    def show(self, item: Item, twin: Item | None = None, *, outcomes: pd.DataFrame | None = None,
             margins: pd.DataFrame | None = None) -> None:
        """Display ``item`` and, for ViLMA, its proficiency ``twin``. ``outcomes`` and ``margins`` are the long
        tables of :mod:`bench.metrics.flags` for the viewer's runs (computed for this item when not given)."""
        if outcomes is None or margins is None:
            scores = {run.label: RunScores.of(run) for run in self.run_list}
            items = [item] + ([twin] if twin is not None else [])
            outcomes = run_outcomes(items, scores) if outcomes is None else outcomes
            margins = run_margins(items, scores) if margins is None else margins
        margin = margins[margins["item_id"] == item.item_id].set_index("run")["margin"]
        self.shown_item = item
        self.probes, self.probing = [], ""
        asked = [run for run in self.run_list if item.item_id in self._asked(run)]
        self.texts = text_state(item)
        self.twin = text_state(twin) if twin is not None else []
        self.clips = clip_state(item, asked[0] if asked else None, self.server, self.proxy_folder)
        self.runs = [run_state(item, run, outcomes[outcomes["run"] == run.label], margin.get(run.label, float("nan")),
                               twin) if run in asked else not_scored_state(run) for run in self.run_list]
        self.item = {"item_id": item.item_id, "benchmark": item.benchmark, "subset": item.subset}
