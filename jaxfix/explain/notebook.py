"""`jaxfix explain nb.ipynb [ARGS...]`: the notebook's code cells run in order as a script, under
the monitor, and recompiles reported at `cell N:line`.

The child runs `python -m jaxfix.explain._run_notebook NB [ARGS...]`: the joined module
(`engine.notebook.runnable`: IPython input inert, a timing magic's statement run once) compiled
under the notebook's own path and run as `__main__` in the notebook's folder. JAX then names the
notebook and a line of the joined module as the definition and call site of each function;
`place` turns those into (cell, line in the cell) for the report, and the join analyses the
notebook's joined module (`notebook_source`), so both sides use the same lines.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import replace

SUFFIX = ".ipynb"


def command_for(argv: list[str]) -> list[str]:
    """`argv` as the command to run: a notebook first becomes this module's runner."""
    if argv and argv[0].endswith(SUFFIX):
        return [sys.executable, "-m", "jaxfix.explain._run_notebook", *argv]
    return argv


@functools.lru_cache(maxsize=32)
def _module(path: str):
    from jaxfix.engine.notebook import read

    with open(path, encoding="utf-8") as handle:
        return read(handle.read())[1]


def notebook_source(path: str) -> str:
    """The joined module of the notebook at `path` (raises `NotebookError`, `OSError`)."""
    return _module(path).text


def cell_line(path: str, line: int) -> tuple[int | None, int]:
    """(cell number, line in the cell) of a line of a notebook's joined module; (None, line)
    for any other file, or a notebook that cannot be read."""
    if not path.endswith(SUFFIX):
        return None, line
    try:
        module = _module(os.path.realpath(path))
    except Exception:  # noqa: BLE001 - unreadable now: its lines stay the module's
        return None, line
    cell, in_cell, _ = module.locate(line, 1, module.starts(), module.text.splitlines())
    return cell, in_cell


def place(collected, causes) -> None:
    """Positions in notebooks (definitions, call sites, joined findings) as cells and their lines."""
    for function in collected.functions:
        function.cell, function.line = cell_line(function.path, function.line)
        for miss in function.retraces:
            if miss.site is not None and miss.site.path.endswith(SUFFIX):
                cell, line = cell_line(miss.site.path, miss.site.line)
                miss.site = replace(miss.site, cell=cell, line=line)
    for group in causes.values():
        for cause in group:
            for match in cause.matches:
                f = match.finding
                if f.path.endswith(SUFFIX) and f.cell is None:
                    cell, line = cell_line(f.path, f.line)
                    end_cell, end_line = cell_line(f.path, f.end_line)
                    match.finding = replace(f, cell=cell, line=line, end_line=end_line if end_cell == cell else line)
