"""A study file (TOML) read and checked into the runs it asks for: every model set-up (and each of its shortcut
controls) on every benchmark, each a :class:`~bench.config.ScoreConfig` into one runs folder.

Everything is checked before anything is scored, and every mistake is one line naming the table and key to change.
Paths may use ``{home}`` (the data home: ``$FOILBENCH_HOME``, else ``foilbench-data`` in the checkout) and
``{study}`` (the study file's folder); relative paths are read from the study file's folder. ``model =
"world:NAME"`` names a model trained on the generated world (built on first use) and ``[study] world = "full"`` makes
sure the generated world is there first: that is how the demo is one study file.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.config import DataSource, ScoreConfig

STUDY_KEYS = {"runs", "report", "world", "seed"}
BENCHMARK_KEYS = {"name", "data", "videos", "options"}
MODEL_KEYS = {"name", "model", "family", "protocol", "prompt", "frames", "limit", "spread", "batch_size", "device",
              "dtype", "seed", "options", "control", "controls", "benchmarks"}
ENDPOINT_KEYS = {"endpoint": "url", "api_key_env": "key_env", "concurrency": "concurrency",
                 "max_requests": "max_requests", "token_budget": "token_budget", "request_timeout": "timeout",
                 "max_retries": "retries"}
"""A ``[[models]]`` table's keys for a model served elsewhere (family ``api``), as :class:`~bench.config.Endpoint`
names them."""
ENDPOINT_TYPES = {"endpoint": (str, "a URL"), "api_key_env": (str, "the name of an environment variable"),
                  "request_timeout": ((int, float), "a number of seconds")}
WORLD_MODEL = "world:"
WORLD_SIZES = ("small", "full")


def folder_name(run: str) -> str:
    """A run name as a folder name: ``X-CLIP reversed`` -> ``x-clip-reversed``."""
    return re.sub(r"[^a-z0-9]+", "-", run.lower()).strip("-")


@dataclass(frozen=True)
class Benchmark:
    """A benchmark of the study: its registered name and where its released files are."""

    name: str
    source: DataSource


@dataclass
class Study:
    """A checked study: where the runs and the report go, the generated world to make first (or None), the
    benchmarks and the runs (run-major: each set-up on every benchmark, its controls after it)."""

    path: Path
    runs: Path
    report: Path
    world: str | None
    benchmarks: list[Benchmark]
    configs: list[ScoreConfig] = field(default_factory=list)


class StudyError(ValueError):
    """A mistake in a study file: one line naming where it is."""


def _typed(where: str, value: Any, kind: type, what: str) -> Any:
    """``value`` when it is of ``kind`` (a bool is no integer); a one-line error otherwise."""
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise StudyError(f"{where} must be {what}, got {value!r}")
    return value


def _keys(where: str, table: Any, allowed: set[str], required: tuple[str, ...] = ()) -> dict:
    _typed(where, table, dict, "a table")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise StudyError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")
    missing = [k for k in required if k not in table]
    if missing:
        raise StudyError(f"{where}: missing key(s) {', '.join(missing)}")
    return table


class _Paths:
    """``{home}``, ``{study}`` and relative paths of a study file."""

    def __init__(self, study: Path, home: Path):
        self.study, self.home = study, home

    def __call__(self, where: str, text: Any) -> Path:
        _typed(where, text, str, "a path (text)")
        try:
            expanded = text.format(home=self.home, study=self.study)
        except (KeyError, IndexError, ValueError):
            raise StudyError(f"{where}: only {{home}} and {{study}} may be used in a path, got {text!r}") from None
        path = Path(expanded).expanduser()
        return (path if path.is_absolute() else self.study / path).resolve()


def read_study(path: str | Path, home: str | Path | None = None, *, check_files: bool = True) -> Study:
    """The study in ``path``, checked (``home``: the data home; default :func:`bench.paths.data_home`). With
    ``check_files`` every benchmark's data path must exist (a study with ``world`` checks after making the world)."""
    from bench.paths import data_home

    path = Path(path)
    if not path.is_file():
        raise StudyError(f"{path}: no such study file")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise StudyError(f"{path}: not valid TOML: {err}") from None
    unknown = sorted(set(raw) - {"study", "benchmarks", "models"})
    if unknown:
        raise StudyError(f"{path.name}: unknown table(s) {', '.join(unknown)}; a study has [study], [[benchmarks]] "
                         "and [[models]]")
    paths = _Paths(path.parent.resolve(), Path(home).expanduser().resolve() if home else data_home())
    top = _keys("[study]", raw.get("study", {}), STUDY_KEYS, ("runs",))
    world = top.get("world")
    if world is not None and world not in WORLD_SIZES:
        raise StudyError(f"[study] world must be one of {', '.join(WORLD_SIZES)}, got {world!r}")
    runs = paths("[study] runs", top["runs"])
    report = paths("[study] report", top["report"]) if "report" in top else runs.parent / f"{runs.name}-report"
    seed = _typed("[study] seed", top.get("seed", 0), int, "an integer")
    benchmarks = _benchmarks(raw.get("benchmarks"), paths, check_files and world is None)
    study = Study(path, runs, report, world, benchmarks)
    study.configs = _configs(raw.get("models"), benchmarks, runs, paths, seed)
    return study


def _benchmarks(tables: Any, paths: _Paths, check_files: bool) -> list[Benchmark]:
    from bench.registry import spec

    if not tables:
        raise StudyError("a study needs at least one [[benchmarks]] table")
    _typed("[[benchmarks]]", tables, list, "an array of tables")
    found: dict[str, Benchmark] = {}
    for n, table in enumerate(tables, 1):
        where = f"[[benchmarks]] #{n}"
        _keys(where, table, BENCHMARK_KEYS, ("name", "data"))
        given = _typed(f"{where} name", table["name"], str, "text")
        try:
            name = spec(given).name
        except ValueError as err:
            raise StudyError(f"{where}: {err}") from None
        if name in found:
            raise StudyError(f"{where}: benchmark {name} is listed twice")
        data = paths(f"{where} ({name}) data", table["data"])
        videos = paths(f"{where} ({name}) videos", table["videos"]) if "videos" in table else None
        options = {k: (str(paths(f"{where} ({name}) options.{k}", v)) if k in ("labels",) else v)
                   for k, v in _typed(f"{where} ({name}) options", table.get("options", {}), dict, "a table").items()}
        if check_files:
            for label, given in (("data", data), ("videos", videos)):
                if given is not None and not given.exists():
                    raise StudyError(f"{where} ({name}) {label}: {given} does not exist")
        found[name] = Benchmark(name, DataSource(name, str(data), str(videos) if videos else None, options))
    return list(found.values())


def _configs(tables: Any, benchmarks: list[Benchmark], runs: Path, paths: _Paths, seed: int) -> list[ScoreConfig]:
    from bench.frames import parse_policy
    from bench.frames.controls import check_control
    from bench.scoring.families import REMOTE, check_protocol

    if not tables:
        raise StudyError("a study needs at least one [[models]] table")
    _typed("[[models]]", tables, list, "an array of tables")
    configs: list[ScoreConfig] = []
    folders: dict[Path, str] = {}
    for n, table in enumerate(tables, 1):
        where = f"[[models]] #{n}"
        _keys(where, table, MODEL_KEYS | set(ENDPOINT_KEYS), ("name", "model"))
        name = _typed(f"{where} name", table["name"], str, "text")
        where = f"[[models]] {name!r}"
        endpoint = _endpoint(where, table)
        model = table["model"] if endpoint else _model(where, table["model"], paths)
        family = table.get("family", REMOTE if endpoint else None)
        try:
            if family is not None:
                check_protocol(_typed(f"{where} family", family, str, "text"), table.get("protocol"))
            elif isinstance(model, str) and model.startswith(WORLD_MODEL):
                raise StudyError(f"{where}: a world model needs its family")
            parse_policy(_typed(f"{where} frames", table.get("frames", "uniform:k=8"), str, "text"))
            controls = [check_control(c) for c in _typed(f"{where} controls", table.get("controls", []), list,
                                                        "a list of control names")]
            own = check_control(table["control"]) if "control" in table else None
        except StudyError:
            raise
        except ValueError as err:
            raise StudyError(f"{where}: {err}") from None
        limit = table.get("limit")
        if limit is not None and (_typed(f"{where} limit", limit, int, "an integer") < 1):
            raise StudyError(f"{where} limit must be at least 1, got {limit}")
        chosen = _typed(f"{where} benchmarks", table.get("benchmarks", [b.name for b in benchmarks]), list,
                        "a list of benchmark names")
        known = {b.name: b for b in benchmarks}
        missing = [b for b in chosen if b not in known]
        if missing:
            raise StudyError(f"{where} benchmarks: {', '.join(map(str, missing))} not among the study's "
                             f"[[benchmarks]] ({', '.join(known)})")
        setups = [(name, own)] + [(f"{name} {c}", c) for c in controls if c != own]
        for run, control in setups:
            for bench_name in chosen:
                out = runs / f"{bench_name}-{folder_name(run)}"
                if out in folders:
                    raise StudyError(f"{where}: run {run!r} on {bench_name} goes to {out.name}, as {folders[out]!r} "
                                     "does: give the set-ups names that differ")
                folders[out] = run
                configs.append(ScoreConfig(
                    known[bench_name].source, model, family=family, protocol=table.get("protocol"),
                    frame_policy=table.get("frames", "uniform:k=8"), prompt=table.get("prompt"),
                    batch_size=_typed(f"{where} batch_size", table.get("batch_size", 8), int, "an integer"),
                    device=table.get("device", "auto"), dtype=table.get("dtype", "auto"), out=out, limit=limit,
                    spread=_typed(f"{where} spread", table.get("spread", False), bool, "true or false"),
                    seed=_typed(f"{where} seed", table.get("seed", seed), int, "an integer"), name=run,
                    options=_typed(f"{where} options", table.get("options", {}), dict, "a table"),
                    control=control, progress=False, endpoint=endpoint))
    return configs


def _endpoint(where: str, table: dict):
    """The :class:`~bench.config.Endpoint` of a ``[[models]]`` table with an ``endpoint`` key (None without one; its
    other keys alone are an error)."""
    from bench.config import Endpoint

    given = {k: table[k] for k in ENDPOINT_KEYS if k in table}
    if "endpoint" not in given:
        if given:
            raise StudyError(f"{where}: {', '.join(given)} apply to models served elsewhere: add endpoint = URL")
        return None
    for key, value in given.items():
        kind, what = ENDPOINT_TYPES.get(key, (int, "an integer"))
        _typed(f"{where} {key}", value, kind, what)
    endpoint = Endpoint(**{ENDPOINT_KEYS[k]: v for k, v in given.items()})
    try:
        endpoint.check()
    except ValueError as err:
        raise StudyError(f"{where}: {err}") from None
    return endpoint


def _model(where: str, given: Any, paths: _Paths) -> str:
    """A hub id as given, a ``world:NAME`` model as given (checked and resolved by the command, which knows the
    generated world's models), or a local folder
    (``{home}``, ``{study}`` and relative paths resolved) when the text looks like a path."""
    _typed(f"{where} model", given, str, "a hub id, a folder or world:NAME")
    if given.startswith(WORLD_MODEL):
        return given
    if "{" in given or given.startswith((".", "/", "~")):
        return str(paths(f"{where} model", given))
    return given
