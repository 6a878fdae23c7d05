"""Model families: which backend computes a model's answers, which protocols it can serve, and how a family is
recognised from a model's config (``config.json`` of a hub id or a local folder).

Besides the built-in families, a separate package may add families for models transformers does not ship (ViCLIP,
LanguageBind, CLIP4Clip...): each entry point of the group ``foilbench.backends`` names a :class:`Family` (its name
is the family's), which :func:`families` lists beside the built-in ones (docs/models.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata

from bench.registry import resolve

ENTRY_POINTS = "foilbench.backends"
REMOTE = "api"
"""The family of a run given an endpoint and no family."""


@dataclass(frozen=True)
class Family:
    """A backend class (``"module:Class"``) and the protocols it serves (the first is the default);
    ``model_types``: the config model types it claims (a plugin's own, which no built-in family recognises);
    ``remote``: the model is served elsewhere (no config or weights to read here; it is reached through a run's
    ``endpoint``)."""

    name: str
    backend: str
    protocols: tuple[str, ...]
    summary: str
    model_types: tuple[str, ...] = ()
    remote: bool = False


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("contrastive", "bench.scoring.backends.contrastive:ContrastiveBackend", ("similarity",),
           "CLIP, SigLIP: frame embeddings pooled per clip, cosine similarity with each text"),
    Family("xclip", "bench.scoring.backends.xclip:XCLIPBackend", ("similarity",),
           "X-CLIP: each clip with its texts through the whole model"),
    Family("videollm", "bench.scoring.backends.videollm:VideoLLMBackend", ("entail", "mc"),
           "Qwen2-VL, LLaVA-OneVision, Video-LLaVA...: next-token logits of Yes/No or option letters"),
    Family("videotext", "bench.scoring.backends.videotext:VideoTextBackend", ("similarity",),
           "PE-Video, VideoPrism: one embedding per clip from the video tower, similarity with each text"),
    Family("textlm", "bench.scoring.backends.textlm:TextLMBackend", ("loglik",),
           "GPT-2, OPT...: log-likelihood of each text, no video"),
    Family("api", "bench.scoring.backends.api:ApiBackend", ("entail", "mc"),
           "GPT, Gemini, Claude, vLLM or SGLang servers behind an OpenAI-compatible endpoint (--endpoint): "
           "answer-token log-probabilities where returned, else the answer text read by the paper's parser",
           remote=True),
)}


@lru_cache(maxsize=1)
def _entry_points() -> tuple[metadata.EntryPoint, ...]:
    """The ``foilbench.backends`` entry points of the installed packages, read once per process."""
    return tuple(metadata.entry_points(group=ENTRY_POINTS))


@lru_cache(maxsize=1)
def _plugins() -> tuple[dict[str, tuple[Family, str]], tuple[str, ...]]:
    found, problems = {}, []
    for point in _entry_points():
        source = point.dist.name if point.dist else point.value
        try:
            family = point.load()
        except Exception as err:  # noqa: BLE001 - a broken package must not stop the built-in families
            problems.append(f"the {ENTRY_POINTS} entry point {point.name!r} of {source} cannot be loaded "
                            f"({type(err).__name__}: {err})")
            continue
        if not isinstance(family, Family) or family.name != point.name or point.name in FAMILIES:
            problems.append(f"the {ENTRY_POINTS} entry point {point.name!r} of {source} ({point.value}) must name a "
                            f"Family called {point.name!r}, not a built-in one")
            continue
        found[point.name] = (family, source)
    return found, tuple(problems)


def plugins() -> dict[str, tuple[Family, str]]:
    """The families installed packages add through the ``foilbench.backends`` entry points: name -> (family, the
    distribution that adds it). One that cannot be loaded, or names no proper :class:`Family`, is left out and
    said by :func:`plugin_problems`."""
    return _plugins()[0]


def plugin_problems() -> list[str]:
    """One line per ``foilbench.backends`` entry point left out, saying why."""
    return list(_plugins()[1])


def families() -> dict[str, Family]:
    """Every family: the built-in ones, then those installed packages add (:func:`plugins`)."""
    return {**FAMILIES, **{name: family for name, (family, _) in plugins().items()}}


def reads_config(family: str) -> bool:
    """Whether Foilbench locates ``family``'s models and reads their transformers config (a built-in family whose
    models are not served elsewhere); a family a package adds finds its own models, a remote one is asked by name."""
    return family in FAMILIES and not FAMILIES[family].remote


def family_names() -> list[str]:
    """The names of every family, without importing the packages that add some (for a command's choices)."""
    return list(FAMILIES) + [p.name for p in _entry_points() if p.name not in FAMILIES]


def family_of_config(config) -> str | None:
    """The family of a transformers config: its row in the architecture table, else a plugin's claimed model type,
    Video-LLMs as image-text-to-text models, contrastive models as models with image and text feature heads,
    video-text encoders as models with video and text feature heads, text LMs as causal LMs; None when none fits."""
    from transformers.models.auto import modeling_auto as auto

    from bench.scoring.architectures import architecture_of

    model_type = getattr(config, "model_type", "")
    row = architecture_of(model_type)
    if row is not None:
        return row.family
    claimed = next((f.name for f in families().values() if model_type in f.model_types), None)
    if claimed is not None:
        return claimed
    if model_type in auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        return "videollm"
    name = auto.MODEL_MAPPING_NAMES.get(model_type)
    if name is not None:
        import transformers

        model_class = getattr(transformers, name if isinstance(name, str) else name[0], None)
        for feature, family in (("get_image_features", "contrastive"), ("get_video_features", "videotext")):
            if hasattr(model_class, feature) and hasattr(model_class, "get_text_features"):
                return family
    if model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "textlm"
    return None


def infer_family(model: str) -> str:
    """The family of ``model`` (a hub id or a local folder) from its config; a one-line error when it cannot be
    read or fits no family. A model type of the architecture table is known without building its config (which an
    older transformers may fail to build: the table's check then says why)."""
    from transformers import AutoConfig

    from bench.scoring.architectures import architecture_of, model_type_of

    row = architecture_of(model_type_of(model))
    if row is not None:
        return row.family
    try:
        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read the config of {model!r} to infer its family ({str(err).splitlines()[0]}); "
                         f"pass --family ({', '.join(families())})") from None
    found = family_of_config(config)
    if found is None:
        raise ValueError(f"{model!r} is a {config.model_type!r} model, which fits no family "
                         f"({', '.join(families())}); pass --family if one applies")
    return found


def check_fits(model: str, family: str) -> None:
    """A one-line error when ``model``'s config says it belongs to another family than ``family`` (nothing when the
    config cannot be read or fits no family: the user's choice stands)."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError):
        return
    found = family_of_config(config)
    if found is not None and found != family:
        raise ValueError(f"{model!r} is a {config.model_type!r} model of the {found} family; --family {family} does "
                         f"not fit it (leave --family out, or use --family {found})")


def check_protocol(family: str, protocol: str | None) -> str:
    """``protocol``, or the family's default, checked to be one the family serves."""
    known = families()
    if family not in known:
        why = "".join(f" ({p})" for p in plugin_problems() if f"point {family!r}" in p)
        raise ValueError(f"unknown model family {family!r}; choose one of {', '.join(known)}{why}")
    served = known[family].protocols
    if protocol is None:
        return served[0]
    if protocol not in served:
        raise ValueError(f"the {family} family serves the {', '.join(served)} protocol(s), not {protocol!r}")
    return protocol


def load_backend(family: str, model: str, **options):
    """The family's backend with ``model`` loaded (``options``: device, dtype and backend options)."""
    return resolve(families()[family].backend)(model, **options)
