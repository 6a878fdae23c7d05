"""The docs site builds with warnings as errors (``mkdocs build --strict``), so a broken link, a missing anchor or a
page left out of the navigation fails the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
