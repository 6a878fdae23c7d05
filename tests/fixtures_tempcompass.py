"""A few rows of TempCompass' released files, verbatim (``fixtures_tempcompass.json``: llyx97/TempCompass at e1b4631,
CC BY-NC 4.0): the questions of one video's order aspect in all four tasks and of another's action aspect in caption
matching, their meta information, two models' predictions of the three rated tasks and the automatic evaluation
released with them (its verdict fields only). Gemini left the order questions unanswered (prediction null); one of
Reka's caption-matching answers is beyond the rules; Gemini's action answers end in a space, which the evaluation
released with them did not strip. :func:`write_repo` lays them out as the repository does."""

from __future__ import annotations

import json
from pathlib import Path

EXCERPT = json.loads((Path(__file__).parent / "fixtures_tempcompass.json").read_text(encoding="utf-8"))
MODELS = tuple(EXCERPT["predictions"])


def write_repo(root: Path) -> Path:
    """``root`` laid out as the repository: questions/, meta_info.json, predictions/<model>/ and
    auto_eval_results/<model>/."""
    for task, data in EXCERPT["questions"].items():
        _write(root / "questions" / f"{task}.json", data)
    _write(root / "meta_info.json", EXCERPT["meta_info"])
    for folder in ("predictions", "auto_eval_results"):
        for model, tasks in EXCERPT[folder].items():
            for task, data in tasks.items():
                _write(root / folder / model / f"{task}.json", data)
    return root


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")


REPO_ENV = "FOILBENCH_TEMPCOMPASS_REPO"


def official_repo() -> Path | None:
    """A checkout of llyx97/TempCompass named by ``$FOILBENCH_TEMPCOMPASS_REPO`` (its eval scripts, questions,
    released predictions and evaluation results), or None."""
    import os

    found = os.environ.get(REPO_ENV)
    return Path(found) if found and (Path(found) / "eval_multi-choice.py").is_file() else None


def official_ratings(repo: Path, task: str, predictions: dict, work: Path) -> dict[tuple[str, str, int], tuple]:
    """(rating, match_success) per (video, aspect, n) as the official ``eval_<task>.py`` rates ``predictions`` with
    ``--disable_llm``: its ``main`` run from the checkout (it prints nothing we read; ``print_result`` divides by every
    aspect's count, so a file without all five aspects ends it in a ZeroDivisionError after the ratings are made)."""
    import contextlib
    import copy
    import importlib.util
    import io
    import os
    import sys

    sys.path.insert(0, str(repo))
    for name in [m for m in sys.modules if m == "utils" or m.startswith("utils.") or m == "prompt_templates"]:
        del sys.modules[name]
    try:
        spec = importlib.util.spec_from_file_location(f"tempcompass_eval_{task}", repo / f"eval_{task}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        results: dict = {}
        here = os.getcwd()
        os.chdir(repo)  # print_result reads meta_info.json from the working folder
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                module.main(copy.deepcopy(predictions), results, str(work / f"official-{task}.json"), True)
        except ZeroDivisionError:
            pass
        finally:
            os.chdir(here)
    finally:
        sys.path.remove(str(repo))
    return {(video, aspect, n): (r["rating"], r["match_success"])
            for video, aspects in results.items() for aspect, rated in aspects.items() for n, r in enumerate(rated)}
