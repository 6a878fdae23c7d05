"""The benchmark registry: one :class:`BenchmarkSpec` per benchmark, and the only list of benchmarks.

Every layer asks the registry what a benchmark is: the loader reads its files, the protocols pick its prompts, the
metrics dispatch to its module, the report runs its notebook beside its published tables, the importers read its
released score files. Modules are named as ``"module:attribute"`` strings and imported on first use, so the registry
sits at the bottom of the package and imports nothing above it.

Adding a benchmark is one :func:`register` call with its spec plus the modules the spec names
(docs/adding-a-benchmark.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping


def resolve(ref: str) -> Any:
    """The object a ``"package.module:attribute"`` (or ``"package.module"``) reference names."""
    module, _, attribute = ref.partition(":")
    found = importlib.import_module(module)
    return getattr(found, attribute) if attribute else found


@dataclass(frozen=True)
class BenchmarkSpec:
    """What one benchmark is, for every layer of the workbench.

    ``loader``: ``load(path, video_root=None, **options) -> ItemSet``.
    ``metrics``: a module following :class:`bench.metrics.dispatch.MetricModule` (``outcomes`` and ``table``).
    ``prompts``: the protocol prompt name per question kind: ``entail`` (Yes/No), ``choice`` (A/B among texts for
    one clip) and ``video_choice`` (A/B among clips joined by a black gap, for one text); ``closed_<kind>``: what the
    paper asked closed (API) models instead, where that differs.
    ``answer_parsers``: per question kind, the paper's reader of a generated answer (``"module:function"``), for
    answers given as text (closed models through an API): default :data:`ANSWER_PARSERS`; None where the paper has
    no reader of that kind (an API run asking it must then get log-probabilities). A Yes/No reader takes the answer
    and gives 1.0 (Yes), 0.0 (No) or NaN; a choice reader takes the answer, the options' texts as shown and, as
    keywords, the ``item`` and the ``order`` shown (indices into ``item.texts``, or the clips for ``video_choice``),
    and gives the index of the option named, -1 for none.
    ``published``: the CSV of the paper's results tables under ``bench/papers``; ``notebook``: the paper notebook.
    ``importers``: import format name -> ``import(items, files, **options) -> (pair rows, choice rows, measure)``.
    ``labels``: the benchmark's label vocabulary (e.g. ViLMA's tests by subtest prefix, the papers' subset names).
    ``backend_options``: model family -> the backend options the paper's own code implies (e.g. the contrastive
    ``pooling``); options given to a run (``-b KEY=VALUE``) override them, and the manifest records the result.
    ``item_score``: the per-item outcomes (metric names of the module's ``outcomes``) that say "the true text won",
    most preferred first; a run is judged by the first it has when runs are pooled over benchmarks
    (:mod:`bench.metrics.pooled`).
    ``formats``: for a benchmark whose items come in several question formats (the item label ``format``, e.g.
    TempCompass' multi-choice, yes/no...): format -> {protocol name: prompt name, or None for the benchmark's prompt
    of that kind (or none, for a protocol that asks no question)}. A protocol asks only the items of the formats that
    list it; a run of it leaves the others out. Empty: every protocol asks every item.
    """

    name: str
    title: str
    paper: str
    loader: str
    metrics: str
    prompts: Mapping[str, str] = field(default_factory=dict)
    published: str | None = None
    notebook: str | None = None
    importers: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, Any] = field(default_factory=dict)
    backend_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    item_score: tuple[str, ...] = ()
    formats: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)
    answer_parsers: Mapping[str, str | None] = field(default_factory=dict)

    def backend_defaults(self, family: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The backend options of a run of ``family`` on this benchmark: this spec's defaults, then ``given``."""
        return {**self.backend_options.get(family, {}), **(given or {})}

    def load(self, path, video_root=None, **options):
        """The benchmark's items read from ``path`` (a file or folder as released)."""
        loader: Callable = resolve(self.loader)
        return loader(path, video_root=video_root, **options)

    def metrics_module(self):
        """The module computing this benchmark's metrics."""
        return resolve(self.metrics)

    def answer_parser(self, kind: str) -> Callable | None:
        """The reader of a generated answer to a ``kind`` question (``entail``, ``choice`` or ``video_choice``); None
        where the paper has none."""
        found = self.answer_parsers.get(kind, ANSWER_PARSERS[kind])
        return resolve(found) if found else None


# The readers of generated answers where a benchmark names none of its own: Yes/No as VELOCITI's gemini/eval.py reads
# them (the ``answers`` import format's reader), a letter as Vinoground's get_score_all.py reads it (its first letter).
ANSWER_PARSERS = {"entail": "bench.importers.common:parse_yes_no", "choice": "bench.importers.common:parse_letter",
                  "video_choice": "bench.importers.common:parse_letter"}


_VILMA_TESTS = (
    ("counting", "Action Counting"),
    ("SRL_", "Situation Awareness"),
    ("Semantic_Role", "Situation Awareness"),
    ("change-state", "Change of State"),
    ("rare-actions", "Rare Actions"),
    ("relations", "Spatial Relations"),
)

_BENCHMARKS: dict[str, BenchmarkSpec] = {}
BENCHMARKS: Mapping[str, BenchmarkSpec] = MappingProxyType(_BENCHMARKS)


def register(benchmark: BenchmarkSpec, *, replace: bool = False) -> BenchmarkSpec:
    """Add ``benchmark`` to the registry (a name already taken is an error unless ``replace``)."""
    if benchmark.name in _BENCHMARKS and not replace:
        raise ValueError(f"a benchmark named {benchmark.name!r} is already registered")
    _BENCHMARKS[benchmark.name] = benchmark
    return benchmark


def unregister(name: str) -> None:
    """Remove a benchmark (tests register toy benchmarks and remove them again)."""
    _BENCHMARKS.pop(name, None)


def spec(name: str) -> BenchmarkSpec:
    """The spec of ``name`` (case-insensitive); an unknown name is a one-line error listing the known ones."""
    found = _BENCHMARKS.get(str(name).lower())
    if found is None:
        raise ValueError(f"unknown benchmark {name!r}; choose one of {', '.join(sorted(_BENCHMARKS))}")
    return found


def names() -> list[str]:
    """The registered benchmark names, in registration order."""
    return list(_BENCHMARKS)


register(BenchmarkSpec(
    name="vilma", title="ViLMA", paper="Kesen et al., ICLR 2024",
    loader="bench.loaders.vilma:load", metrics="bench.metrics.vilma",
    prompts={"entail": "yes-no", "choice": "choice"},
    published="vilma.csv", notebook="vilma.ipynb",
    importers={"vilma": "bench.importers.vilma:import_vilma", "answers": "bench.importers.common:import_answers"},
    labels={"tests": _VILMA_TESTS},
    # models/image/run_clip.py L144-155: per-frame softmax over the item's texts, averaged over frames
    backend_options={"contrastive": {"pooling": "frame_softmax"}},
    item_score=("T",),
))
register(BenchmarkSpec(
    name="vitatecs", title="VITATECS", paper="Li et al., 2023",
    loader="bench.loaders.vitatecs:load", metrics="bench.metrics.vitatecs",
    prompts={"entail": "yes-no", "choice": "vitatecs-mc"},
    published="vitatecs.csv", notebook="vitatecs.ipynb",
    importers={"answers": "bench.importers.common:import_answers"},
    answer_parsers={"choice": "bench.importers.common:parse_vitatecs_option"},
    # CLIP4Clip mean pooling (X-CLIP/modules/modeling.py L392-394): normalise frames, average, normalise
    backend_options={"contrastive": {"pooling": "normalized_mean"}},
    item_score=("accuracy",),
))
register(BenchmarkSpec(
    name="velociti", title="VELOCITI", paper="Saravanan et al.",
    loader="bench.loaders.velociti:load", metrics="bench.metrics.velociti",
    prompts={"entail": "velociti-entail", "choice": "velociti-mcq", "closed_entail": "velociti-entail-closed"},
    published="velociti.csv", notebook="velociti.ipynb",
    answer_parsers={"choice": "bench.importers.velociti:parse_mcq_answer"},
    importers={"velociti-closed": "bench.importers.velociti:import_velociti_closed",
               "answers": "bench.importers.common:import_answers"},
    labels={"aliases": {"agent_bind": "agent binding", "coref": "agent coreference",
                        "action_adv": "action adversarial", "action_bind": "action binding",
                        "chrono": "event chronology"}},
    # clip_eval.py L131-136: raw frame features averaged, then normalised
    backend_options={"contrastive": {"pooling": "raw_mean"}},
    item_score=("ClassicVLE", "MC A∧B"),
))
register(BenchmarkSpec(
    name="videocon", title="VideoCon", paper="Bansal et al.",
    loader="bench.loaders.videocon:load", metrics="bench.metrics.videocon",
    prompts={"entail": "videocon-entail", "choice": "choice"},
    published="videocon.csv", notebook="videocon.ipynb",
    importers={"videocon": "bench.importers.videocon:import_videocon",
               "answers": "bench.importers.common:import_answers"},
    item_score=("caption > contrast", "accuracy", "caption chosen"),
))
register(BenchmarkSpec(
    name="vinoground", title="Vinoground", paper="Vinoground (anonymous review copy)",
    loader="bench.loaders.vinoground:load", metrics="bench.metrics.vinoground",
    prompts={"entail": "yes-no", "choice": "vinoground-text", "video_choice": "vinoground-video"},
    published="vinoground.csv", notebook="vinoground.ipynb",
    importers={"vinoground": "bench.importers.vinoground:import_vinoground",
               "answers": "bench.importers.common:import_answers"},
    item_score=("text", "text (A/B)"),
))
register(BenchmarkSpec(
    name="mvp", title="MVP", paper="Krojer et al., 2025",
    loader="bench.loaders.mvp:load", metrics="bench.metrics.mvp",
    prompts={"entail": "answer-yes-no", "choice": "mvp"},
    published="mvp.csv", notebook="mvp.ipynb",
    importers={"mvp": "bench.importers.mvp:import_mvp"},
    # extract_pred reads a letter; MVP asks no Yes/No question, so it has no reader of Yes/No text
    answer_parsers={"choice": "bench.importers.mvp:parse_choice", "entail": None},
    item_score=("paired accuracy",),
))
register(BenchmarkSpec(
    name="temporalbench", title="TemporalBench", paper="Cai et al., 2024",
    loader="bench.loaders.temporalbench:load", metrics="bench.metrics.temporalbench",
    prompts={"entail": "yes-no", "choice": "temporalbench"},
    published="temporalbench.csv", notebook="temporalbench.ipynb",
    importers={"temporalbench": "bench.importers.temporalbench:import_temporalbench",
               "answers": "bench.importers.common:import_answers"},
    # the default readers are its own: get_qa_acc.py L49 reads a response's first letter (common.parse_letter)
    item_score=("binary accuracy",),
))
register(BenchmarkSpec(
    name="tempcompass", title="TempCompass", paper="Liu et al., ACL Findings 2024",
    loader="bench.loaders.tempcompass:load", metrics="bench.metrics.tempcompass",
    prompts={"entail": "yes-no", "choice": "tempcompass-choice"},
    published="tempcompass.csv", notebook="tempcompass.ipynb",
    importers={"tempcompass": "bench.importers.tempcompass:import_tempcompass"},
    # eval_yes_no.py's reader (for every Yes/No answer), eval_multi-choice.py's and eval_caption_matching.py's
    answer_parsers={"entail": "bench.importers.tempcompass:parse_yes_no",
                    "choice": "bench.importers.tempcompass:parse_choice"},
    # four question formats (the item label "format"): each asked by the protocols that fit it; captioning needs a
    # generated caption and a judge, so only imported answers score it
    formats={"multi-choice": {"similarity": None, "entail": None, "mc": "tempcompass-choice", "loglik": None},
             "yes_no": {"entail": "tempcompass-yes-no"},
             "caption_matching": {"similarity": None, "entail": None, "mc": "tempcompass-choice", "loglik": None},
             "captioning": {}},
    item_score=("multi-choice", "yes/no", "caption matching", "captioning"),
))
register(BenchmarkSpec(
    name="tvbench", title="TVBench", paper="Cores et al., 2024",
    loader="bench.loaders.tvbench:load", metrics="bench.metrics.tvbench",
    prompts={"entail": "answer-yes-no", "choice": "tvbench-mc"},
    published="tvbench.csv", notebook="tvbench.ipynb",
    importers={"tvbench": "bench.importers.tvbench:import_tvbench"},
    # check_ans reads a choice; TVBench asks no Yes/No question, so it has no reader of Yes/No text
    answer_parsers={"choice": "bench.importers.tvbench:parse_choice", "entail": None},
    item_score=("accuracy",),
))
