"""Running the paper notebooks with papermill on given runs, rendering them to HTML, and writing an index."""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Sequence

from bench.paths import PROJECT_ROOT
from bench.registry import names, spec

NOTEBOOK_DIR = PROJECT_ROOT / "notebooks"


def notebooks() -> dict[str, str]:
    """Each registered benchmark with a paper notebook, and the notebook's file name."""
    return {name: spec(name).notebook for name in names() if spec(name).notebook}


class NotebookFailed(RuntimeError):
    """A notebook raised: the message names the notebook, the cell and the error."""


def run_notebook(name: str, out: Path, parameters: dict) -> Path:
    """Execute one paper notebook into ``out/notebooks/<name>.ipynb`` and render ``<name>.html`` beside it."""
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    source = NOTEBOOK_DIR / notebooks()[name]
    executed = out / "notebooks" / f"{name}.ipynb"
    executed.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(str(source), str(executed), parameters=parameters, kernel_name="python3",
                                   progress_bar=False, cwd=str(out))
    except papermill.PapermillExecutionError as err:
        raise NotebookFailed(f"notebook {source.name}, cell {err.exec_count}: {err.ename}: {err.evalue}") from None
    body, _ = HTMLExporter().from_notebook_node(nbformat.read(executed, as_version=4))
    html_path = executed.with_suffix(".html")
    html_path.write_text(body)
    return html_path


def write_index(out: Path, pages: dict[str, Path], seconds: float) -> Path:
    """``index.html`` linking every executed notebook, table and figure."""
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>Foilbench report</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}img{max-width:32em;margin:.5em;"
             "border:1px solid #ddd}li{margin:.2em 0}</style></head><body><h1>Foilbench report</h1>",
             f"<p>Built in {seconds:.0f} s. Notebooks:</p><ul>"]
    parts += [f"<li><a href='{p.relative_to(out)}'>{html.escape(name)}</a></li>" for name, p in pages.items()]
    parts.append("</ul>")
    for name in pages:
        folder = out / name
        if not folder.is_dir():
            continue
        parts.append(f"<h2>{html.escape(name)}</h2><h3>Tables</h3><ul>")
        for table in sorted(folder.glob("*.html")):
            parts.append(f"<li><a href='{name}/{table.name}'>{table.stem}</a> "
                         f"(<a href='{name}/{table.stem}.csv'>csv</a>)</li>")
        parts.append("</ul><h3>Figures</h3>")
        parts += [f"<a href='{name}/{png.name}'><img src='{name}/{png.name}' alt='{png.stem}'></a>"
                  for png in sorted(folder.glob("*.png"))]
    parts.append("</body></html>")
    index = out / "index.html"
    index.write_text("\n".join(parts))
    return index


def build_report(runs: Sequence[str | Path], out: str | Path, chosen_notebooks: Sequence[str] | None = None,
                 data: dict[str, str] | None = None, show_published: bool = True,
                 formats: Sequence[str] = ("png", "svg"), n_boot: int = 1000, progress: bool = True) -> Path:
    """Run the chosen notebooks (default: every paper with a run, or with a data path) and write the index.

    ``data`` maps a benchmark to an annotation path for notebooks without runs (annotation-only tables).
    """
    from tqdm.auto import tqdm

    from bench.store import read_run

    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    runs = [str(Path(r).resolve()) for r in runs]
    benchmarks = {read_run(r).manifest.get("benchmark") for r in runs}
    data = {k: str(Path(v).resolve()) for k, v in (data or {}).items()}
    known = notebooks()
    chosen = list(chosen_notebooks) if chosen_notebooks else [n for n in known if n in benchmarks or n in data]
    unknown = [n for n in chosen if n not in known]
    if unknown:
        raise ValueError(f"unknown notebook(s) {unknown}; choose among {sorted(known)}")
    if not chosen:
        raise ValueError("no notebook to run: give runs (or --data BENCHMARK=PATH for annotation-only reports)")
    started = time.perf_counter()
    pages = {}
    for name in tqdm(chosen, desc="notebooks", unit="nb", disable=not progress):
        parameters = {"runs": runs, "out_dir": str(out), "data_path": data.get(name), "show_published": show_published,
                      "formats": list(formats), "n_boot": n_boot}
        pages[name] = run_notebook(name, out, parameters)
    return write_index(out, pages, time.perf_counter() - started)
