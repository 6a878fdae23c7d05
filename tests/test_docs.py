"""The docs site builds with warnings as errors (``mkdocs build --strict``), so a broken link, a missing anchor or a
page left out of the navigation fails the suite; the README stays a user's guide (no build, suite-run or issue
numbers: history goes to CHANGELOG.md and docs/) and gives the test command CI runs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_LINES = 250  # the most lines the README may have
# what names a piece of the project's history rather than something a user runs: "build 22", "builds 20-22",
# "suite 33", "issue #32", "issue 32", "#32"
HISTORY = re.compile(r"\bbuilds?\s+\d|\bsuite\s+\d|\bissues?\s+#?\d|(?<![\w/&])#\d", re.IGNORECASE)


def history_lines(text: str) -> list[str]:
    """The lines of ``text`` that name a build, a suite run or an issue by number."""
    return [line.strip() for line in text.splitlines() if HISTORY.search(line)]


def test_the_readme_names_no_build_suite_run_or_issue():
    readme = (ROOT / "README.md").read_text()
    assert history_lines(readme) == []
    assert len(readme.splitlines()) <= README_LINES


def test_the_readme_and_the_install_page_give_the_command_ci_runs():
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert command.startswith("python3 -m venv .venv") and "pytest" in command
    for page in (ROOT / "README.md", ROOT / "docs" / "install.md"):
        assert f"```bash\n{command}\n```" in page.read_text(), page.name


@pytest.mark.parametrize("line", ["at build 22 the demo took 344 s", "builds 20-22 on three CPUs",
                                  "Build 21's CI passed", "the suite 33 min 22 s", "as issue #32 allows",
                                  "issue 32's A/B aims", "see #63", "the Issues 12 and 13"])
def test_the_history_check_catches_each_way_of_naming_one(line):
    assert history_lines(f"A user's guide.\n{line}\n") == [line]


@pytest.mark.parametrize("line", ["`foilbench demo --size full`", "build the report of all five papers",
                                  "a 2-core machine", "[docs](docs/install.md#the-demo)", "seed 2's column",
                                  "the suite's environment variables", "`--format png,svg`", "colour #ff0000"])
def test_the_history_check_leaves_a_users_guide_alone(line):
    assert history_lines(line) == []


def _build(root: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_docs_site_builds_strictly_with_every_page(tmp_path):
    done = _build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    pages = {p.stem for p in (ROOT / "docs").iterdir() if p.suffix in (".md", ".ipynb") and p.stem != "index"}
    assert pages and all((tmp_path / "site" / page / "index.html").is_file() for page in pages), pages
    tutorial = (tmp_path / "site" / "tutorial" / "index.html").read_text()
    assert "ItemBrowser" in tutorial  # the explore notebook rendered as a page


@pytest.mark.slow
def test_a_broken_link_fails_the_build(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", copy / "docs", symlinks=True)
    shutil.copytree(ROOT / "notebooks", copy / "notebooks")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    with (copy / "docs" / "frames.md").open("a") as page:
        page.write("\nSee [the renamed page](no-such-page.md).\n")
    done = _build(copy, tmp_path / "site")
    assert done.returncode != 0 and "no-such-page.md" in done.stdout + done.stderr
