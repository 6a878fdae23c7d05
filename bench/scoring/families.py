"""Model families: which backend computes a model's answers, which protocols it can serve, and how a family is
recognised from a model's config (``config.json`` of a hub id or a local folder)."""

from __future__ import annotations

from dataclasses import dataclass

from bench.registry import resolve


@dataclass(frozen=True)
class Family:
    """A backend class (``"module:Class"``) and the protocols it serves (the first is the default); ``remote``: the
    model is served elsewhere (no config or weights to read here; it is reached through a run's ``endpoint``)."""

    name: str
    backend: str
    protocols: tuple[str, ...]
    summary: str
    remote: bool = False


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("contrastive", "bench.scoring.backends.contrastive:ContrastiveBackend", ("similarity",),
           "CLIP, SigLIP: frame embeddings pooled per clip, cosine similarity with each text"),
    Family("xclip", "bench.scoring.backends.xclip:XCLIPBackend", ("similarity",),
           "X-CLIP: each clip with its texts through the whole model"),
    Family("videollm", "bench.scoring.backends.videollm:VideoLLMBackend", ("entail", "mc"),
           "Qwen2-VL, LLaVA-OneVision, Video-LLaVA...: next-token logits of Yes/No or option letters"),
    Family("textlm", "bench.scoring.backends.textlm:TextLMBackend", ("loglik",),
           "GPT-2, OPT...: log-likelihood of each text, no video"),
    Family("api", "bench.scoring.backends.api:ApiBackend", ("entail", "mc"),
           "GPT, Gemini, Claude, vLLM or SGLang servers behind an OpenAI-compatible endpoint (--endpoint): "
           "answer-token log-probabilities where returned, else the answer text read by the paper's parser",
           remote=True),
)}
# Model types whose family is not found from the transformers mappings below.
MODEL_TYPES: dict[str, str] = {"xclip": "xclip"}


def family_of_config(config) -> str | None:
    """The family of a transformers config: X-CLIP by type, Video-LLMs as image-text-to-text models, contrastive
    models as models with image and text feature heads, text LMs as causal LMs; None when none fits."""
    from transformers.models.auto import modeling_auto as auto

    model_type = getattr(config, "model_type", "")
    if model_type in MODEL_TYPES:
        return MODEL_TYPES[model_type]
    if model_type in auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        return "videollm"
    name = auto.MODEL_MAPPING_NAMES.get(model_type)
    if name is not None:
        import transformers

        model_class = getattr(transformers, name if isinstance(name, str) else name[0], None)
        if hasattr(model_class, "get_image_features") and hasattr(model_class, "get_text_features"):
            return "contrastive"
    if model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "textlm"
    return None


def infer_family(model: str) -> str:
    """The family of ``model`` (a hub id or a local folder) from its config; a one-line error when it cannot be
    read or fits no family."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read the config of {model!r} to infer its family ({str(err).splitlines()[0]}); "
                         f"pass --family ({', '.join(FAMILIES)})") from None
    found = family_of_config(config)
    if found is None:
        raise ValueError(f"{model!r} is a {config.model_type!r} model, which fits no family "
                         f"({', '.join(FAMILIES)}); pass --family if one applies")
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
    if family not in FAMILIES:
        raise ValueError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")
    served = FAMILIES[family].protocols
    if protocol is None:
        return served[0]
    if protocol not in served:
        raise ValueError(f"the {family} family serves the {', '.join(served)} protocol(s), not {protocol!r}")
    return protocol


def load_backend(family: str, model: str, **options):
    """The family's backend with ``model`` loaded (``options``: device, dtype and backend options)."""
    return resolve(FAMILIES[family].backend)(model, **options)
