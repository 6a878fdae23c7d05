"""Running the paper notebooks with papermill on given runs, rendering them to offline HTML, and writing the index.

Everything that can be checked is checked before a notebook runs (run folders, chosen notebooks against the runs'
benchmarks, ``--data`` paths, figure formats), and every mistake is one line naming what to change.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed, wait
from pathlib import Path
from typing import Mapping, Sequence

from jupyter_client.manager import AsyncKernelManager

from bench.paths import PROJECT_ROOT
from bench.registry import names, spec
from bench.report.outputs import check_formats

NOTEBOOK_DIR = PROJECT_ROOT / "notebooks"
# The kernel's environment: no progress bars in the executed notebooks (they would need widget JavaScript).
KERNEL_ENV = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
WIDGET = "application/vnd.jupyter.widget-view+json"
# nbconvert's lab template without the scripts it fetches from CDNs (require.js, MathJax, mermaid, widgets): the
# notebooks print no math, no diagrams and no widgets, and the pages must open offline.
OFFLINE_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


def notebooks() -> dict[str, str]:
    """Each registered benchmark with a paper notebook, and the notebook's file name."""
    return {name: spec(name).notebook for name in names() if spec(name).notebook}


class NotebookFailed(ValueError):
    """A notebook raised: the message names the notebook, the cell and the error, in one line."""


class QuietKernelManager(AsyncKernelManager):
    """A kernel over local sockets (no "running over TCP without encryption" warning) with :data:`KERNEL_ENV`, whose
    own messages (stderr) go to ``log_path`` instead of the terminal; its socket folder is removed when the kernel's
    resources are cleaned up."""

    log_path: Path | None = None
    work_dir: Path | None = None

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._socket_dir = tempfile.mkdtemp(prefix="foilbench-kernel-")
        self._log = None
        self.transport = "ipc"
        self.ip = os.path.join(self._socket_dir, "kernel")

    async def start_kernel(self, **kwargs):
        """Start the kernel with :data:`KERNEL_ENV` added to its environment, importing the same ``bench`` as this
        process."""
        env = {**os.environ, **(kwargs.get("env") or {}), **KERNEL_ENV}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH")) if p)
        kwargs["env"] = env
        if self.work_dir is not None:
            kwargs["cwd"] = str(self.work_dir)
        if self.log_path is not None:
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in cleanup_resources
            kwargs["stderr"] = self._log
        return await super().start_kernel(**kwargs)

    async def cleanup_resources(self, restart: bool = False) -> None:
        """Clean up, and remove the socket folder and close the log unless the kernel restarts."""
        await super().cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            if self._log is not None:
                self._log.close()


def kernel_manager(log_path: Path, work_dir: Path) -> type[QuietKernelManager]:
    """A :class:`QuietKernelManager` writing the kernel's own messages to ``log_path``, running in ``work_dir`` (set on
    the kernel: papermill's ``cwd`` changes the whole process's folder, which notebooks run at once would race on)."""
    return type("LoggedKernelManager", (QuietKernelManager,), {"log_path": log_path, "work_dir": work_dir})


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def failing_line(err) -> str:
    """Where in its cell a notebook failed: ``line 7: rep = open_report(...`` from the cell's traceback (IPython marks
    the line with an arrow), else the cell's first line."""
    for block in err.traceback or []:
        for line in ANSI.sub("", block).splitlines():
            found = re.match(r"\s*-+>\s*(\d+)\s+(.*)", line)
            if found:
                return f"line {found[1]}: {_one_line(found[2], 60)}"
    lines = err.source.strip().splitlines()
    return _one_line(lines[0], 60) if lines else "empty cell"


def run_notebook(name: str, out: Path, parameters: dict) -> Path:
    """Execute one paper notebook into ``out/notebooks/<name>.ipynb`` and render ``<name>.html`` beside it (offline:
    no script from a CDN). A failing cell raises :class:`NotebookFailed` naming the notebook, the cell and the error."""
    import papermill

    source = NOTEBOOK_DIR / notebooks()[name]
    executed = out / "notebooks" / f"{name}.ipynb"
    executed.parent.mkdir(parents=True, exist_ok=True)
    log = executed.with_suffix(".kernel.log")
    log.unlink(missing_ok=True)
    try:
        papermill.execute_notebook(str(source), str(executed), parameters=parameters, kernel_name="python3",
                                   progress_bar=False, kernel_manager_class=kernel_manager(log, out))
    except papermill.PapermillExecutionError as err:
        raise NotebookFailed(f"notebook {source.name} failed in cell {err.exec_count} ({failing_line(err)}): "
                             f"{err.ename}: {_one_line(err.evalue)} (traceback in {executed})") from None
    except Exception as err:  # noqa: BLE001 - a dead kernel or a timeout: still one line naming the notebook
        raise NotebookFailed(f"notebook {source.name} could not run: {type(err).__name__}: {_one_line(err)} (the "
                             f"kernel's messages are in {log})") from None
    finally:
        if log.is_file() and not log.stat().st_size:
            log.unlink()
    return render_html(executed)


def render_html(executed: Path) -> Path:
    """``<notebook>.html`` beside an executed notebook: nbconvert's lab page without CDN scripts. Widget outputs
    (progress bars of the libraries a notebook calls) are dropped from both: they need JavaScript from a CDN and their
    text is a stale snapshot."""
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    book = nbformat.read(executed, as_version=4)
    book.metadata.pop("widgets", None)
    for cell in book.cells:
        if "outputs" in cell:
            cell.outputs = [o for o in cell.outputs if WIDGET not in o.get("data", {})]
    nbformat.write(book, executed)
    exporter = HTMLExporter(template_name="lab", template_file="offline.html.j2",
                            extra_loaders=[jinja2.DictLoader({"offline.html.j2": OFFLINE_TEMPLATE})])
    body, _ = exporter.from_notebook_node(book)
    page = executed.with_suffix(".html")
    page.write_text(body)
    return page


def check_request(runs: Sequence, chosen: Sequence[str] | None, data: Mapping[str, str]) -> list[str]:
    """The notebooks to run, after checking the request: known notebooks, each with a run or a ``--data`` path, and
    existing ``--data`` paths. ``runs`` are :class:`bench.store.Run`; every mistake is a one-line ``ValueError``."""
    known = notebooks()
    for name, path in data.items():
        if name not in known:
            raise ValueError(f"--data {name}={path}: no paper notebook named {name!r}; choose among "
                             f"{', '.join(known)}")
        if not Path(path).exists():
            raise ValueError(f"--data {name}={path}: no such file or folder")
    benchmarks = {r.manifest.benchmark for r in runs}
    if chosen:
        unknown = [n for n in chosen if n not in known]
        if unknown:
            raise ValueError(f"--notebooks: unknown notebook(s) {', '.join(unknown)}; choose among {', '.join(known)}")
        missing = [n for n in chosen if n not in benchmarks and n not in data]
        if missing:
            theirs = ", ".join(sorted(str(b) for b in benchmarks)) or "none"
            raise ValueError(f"--notebooks {','.join(chosen)}: no run of {', '.join(missing)} among the {len(runs)} "
                             f"run(s) given (their benchmarks: {theirs}); give such runs or --data "
                             f"{missing[0]}=PATH")
        return list(dict.fromkeys(chosen))
    found = [n for n in known if n in benchmarks or n in data]
    if not found:
        raise ValueError("no notebook to run: give run folders (or --data BENCHMARK=PATH for annotation-only tables)")
    return found


def build_report(runs: Sequence[str | Path], out: str | Path, chosen_notebooks: Sequence[str] | None = None,
                 data: dict[str, str] | None = None, show_published: bool = True,
                 formats: Sequence[str] = ("png", "svg"), n_boot: int = 1000, progress: bool = True,
                 jobs: int | None = None, pool_by: Sequence[str] = ()) -> Path:
    """Run the chosen notebooks (default: every paper with a run, or with a data path) and write the index.

    ``data`` maps a benchmark to an annotation path for notebooks without runs (annotation-only tables). ``jobs``
    notebooks run at once (default: one per CPU core, at most 4); the first failure stops the report. ``pool_by``:
    item labels by which the index shows accuracy with the runs of one name pooled over benchmarks. Each notebook is
    given its own benchmark's runs.
    """
    report = ReportBuilder(out, data=data, show_published=show_published, formats=formats, n_boot=n_boot,
                           progress=progress, jobs=jobs, pool_by=pool_by)
    try:
        return report.finish(runs, chosen_notebooks)
    finally:
        report.close()


class ReportBuilder:
    """A report whose paper notebooks can start before every run is scored: :meth:`start` runs a benchmark's notebook
    on that benchmark's runs (all of them, scored) while the caller goes on, ``early_jobs`` at a time (the cores the
    caller leaves idle; :meth:`allow` raises it); :meth:`finish` runs the other notebooks, ``jobs`` at a time, and
    writes the index. The arguments are :func:`build_report`'s, checked here before any notebook runs."""

    def __init__(self, out: str | Path, *, data: dict[str, str] | None = None, show_published: bool = True,
                 formats: Sequence[str] = ("png", "svg"), n_boot: int = 1000, progress: bool = True,
                 jobs: int | None = None, pool_by: Sequence[str] = (), early_jobs: int = 1):
        check_formats(formats)
        if n_boot < 1:
            raise ValueError(f"--bootstrap must be at least 1, got {n_boot}")
        self.jobs = jobs if jobs is not None else min(4, os.cpu_count() or 1)
        if self.jobs < 1:
            raise ValueError(f"--jobs must be at least 1, got {self.jobs}")
        self.out = Path(out).resolve()
        if self.out.exists() and not self.out.is_dir():
            raise ValueError(f"--out {self.out}: a file is in the way (give a folder)")
        self.given = dict(data or {})  # as the user wrote them (the messages name them so)
        self.data = {k: str(Path(v).resolve()) for k, v in self.given.items()}
        self.settings = {"show_published": show_published, "formats": list(formats), "n_boot": n_boot}
        self.progress, self.pool_by = progress, list(pool_by)
        self.at_once = max(1, min(early_jobs, self.jobs))  # notebooks that may run at once now
        self._slots = threading.Semaphore(self.at_once)
        self._pool = ThreadPoolExecutor(max_workers=self.jobs)
        self._started: dict[str, tuple[tuple[str, ...], Future]] = {}  # notebook -> (its runs, its future)
        self._began: float | None = None
        self.pages: dict[str, Path] = {}  # each notebook's HTML page, once finish has run

    def start(self, benchmark: str, runs: Sequence[str | Path]) -> bool:
        """Start ``benchmark``'s notebook on ``runs`` (that benchmark's runs, every one of them scored); False when
        the benchmark has no paper notebook."""
        if benchmark not in notebooks():
            return False
        paths = tuple(sorted(str(Path(r).resolve()) for r in runs))
        self._started[benchmark] = (paths, self._pool.submit(self._run, benchmark, paths))
        return True

    def allow(self, jobs: int) -> None:
        """Let up to ``jobs`` notebooks run at once from now on (at most the builder's ``jobs``; never fewer than
        before): the caller has left more cores idle."""
        more = min(jobs, self.jobs) - self.at_once
        for _ in range(max(0, more)):
            self._slots.release()
        self.at_once += max(0, more)

    def done(self) -> list[str]:
        """The notebooks that have run to their end so far, in the order they were started."""
        return [name for name, (_, future) in self._started.items() if future.done()]

    def _run(self, name: str, paths: Sequence[str]) -> Path:
        with self._slots:
            if self._began is None:
                self._began = time.perf_counter()
            self.out.mkdir(parents=True, exist_ok=True)
            parameters = {"runs": list(paths), "out_dir": str(self.out), "data_path": self.data.get(name),
                          **self.settings}
            return run_notebook(name, self.out, parameters)

    def finish(self, runs: Sequence[str | Path], chosen_notebooks: Sequence[str] | None = None) -> Path:
        """Run the chosen notebooks (default: every paper with a run, or with a data path) that :meth:`start` did not
        start on the same runs of their benchmark, work out the index's sections that read the runs alone while they
        run, wait for them and write the index; its path."""
        from tqdm.auto import tqdm

        from bench.report.index import run_sections, write_index
        from bench.store import read_run

        stored = [read_run(r) for r in runs]
        chosen = check_request(stored, chosen_notebooks, self.given)
        mine: dict[str, list[str]] = {}
        for run, path in zip(stored, runs):
            mine.setdefault(run.manifest.benchmark, []).append(str(Path(path).resolve()))
        for name in chosen:
            paths = tuple(sorted(mine.get(name, [])))
            earlier = self._started.get(name)
            if earlier is None or earlier[0] != paths:
                if earlier is not None:
                    wait([earlier[1]])  # started on other runs: its outputs are written again, not beside it
                self._started[name] = (paths, self._pool.submit(self._run, name, paths))
        self.allow(self.jobs)
        self.out.mkdir(parents=True, exist_ok=True)
        sections = run_sections(self.out, stored, self.pool_by)  # here, while the notebooks run
        futures = {self._started[name][1]: name for name in chosen}
        with tqdm(total=len(chosen), desc="notebooks", unit="nb", leave=False,
                  disable=None if self.progress else True) as bar:
            for done in as_completed(futures):
                done.result()
                bar.update()
        self.pages = {name: self._started[name][1].result() for name in chosen}
        seconds = time.perf_counter() - (self._began or time.perf_counter())
        return write_index(self.out, stored, self.pages, seconds, self.pool_by, sections)

    def close(self) -> None:
        """Cancel the notebooks not yet running and wait for those that are (after a failure or an interrupt)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
