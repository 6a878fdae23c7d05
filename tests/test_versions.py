"""The declared dependency ranges: the installed transformers is inside them, the two tested ends are the range's
ends, and the package never pins torch (installing Foilbench must not replace a GPU user's torch build)."""

from __future__ import annotations

import os
import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.version import Version

from bench.paths import PROJECT_ROOT


def declared() -> dict[str, Requirement]:
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
    return {r.name: r for r in map(Requirement, project["dependencies"])}


def pins(name: str) -> dict[str, Version]:
    lines = (PROJECT_ROOT / name).read_text().splitlines()
    found = {}
    for line in lines:
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            (spec,) = requirement.specifier
            assert spec.operator == "==", line
            found[requirement.name] = Version(spec.version)
    return found


def test_installed_transformers_is_inside_the_declared_range():
    installed = Version(metadata.version("transformers"))
    assert installed in declared()["transformers"].specifier
    if os.environ.get("FOILBENCH_OLDEST"):  # the README's test command sets it for its run on the oldest end
        assert installed == pins("requirements-oldest.txt")["transformers"]


def test_the_tested_ends_are_the_ends_of_the_declared_range():
    specifier = declared()["transformers"].specifier
    floor = next(s for s in specifier if s.operator == ">=")
    ceiling = next(s for s in specifier if s.operator == "<")
    oldest, newest = pins("requirements-oldest.txt")["transformers"], pins("constraints.txt")["transformers"]
    assert oldest == Version(floor.version)
    assert newest in specifier and newest.major == Version(ceiling.version).major - 1


def test_torch_is_a_range_and_the_exact_builds_live_in_the_constraints():
    requirements = declared()
    for name in ("torch", "torchvision", "transformers"):
        assert all(s.operator != "==" for s in requirements[name].specifier), name
        assert pins("constraints.txt")[name] in requirements[name].specifier, name
