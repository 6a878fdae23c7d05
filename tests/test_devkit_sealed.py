"""The dev kit (``bench/devkit``: the generated world, its models, the perf runs, the demo) is sealed off: no core
module imports it, names it or carries a concept only it uses. Only the commands sit beside it and may call it."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BESIDE = ("bench/devkit", "bench/commands")
WORDS = ("devkit", "foil_type", "sample_writer", "sample_layout", "Prebuilt")


def _core_modules() -> list[Path]:
    found = [p for folder in ("bench", "widgets") for p in (ROOT / folder).rglob("*.py")]
    return [p for p in found if not str(p.relative_to(ROOT)).startswith(BESIDE)]


@pytest.mark.parametrize("word", WORDS)
def test_no_core_module_names_the_dev_kit(word):
    modules = _core_modules()
    assert len(modules) > 50
    naming = [str(p.relative_to(ROOT)) for p in modules if word in p.read_text()]
    assert not naming, f"{word!r} in {naming}"
