"""`python -m jaxfix.explain._run_notebook NB [ARGS...]`: what `jaxfix explain nb.ipynb` runs
under the monitor (see `explain.notebook`). A module of its own: the package does not import it."""

from __future__ import annotations

import os
import sys

from jaxfix.explain.notebook import cell_line


def main(argv: list[str]) -> int:
    """Run the notebook `argv[0]`'s code cells in order as `__main__` (sys.argv = argv)."""
    import builtins
    import linecache
    import traceback

    from jaxfix.engine.notebook import NotebookError, read, runnable

    path = os.path.realpath(argv[0])
    try:
        with open(path, encoding="utf-8") as handle:
            _, module = read(handle.read())
    except (OSError, NotebookError) as exc:
        sys.stderr.write(f"{argv[0]}: {exc}\n")
        return 2
    if module.errors:
        sys.stderr.write(f"{argv[0]}: cannot run: {'; '.join(module.errors)}\n")
        return 2
    text = runnable(module)
    linecache.cache[path] = (len(text), None, text.splitlines(keepends=True), path)
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)
    os.chdir(folder)
    sys.argv = [path, *argv[1:]]
    namespace = {"__name__": "__main__", "__file__": path, "__builtins__": builtins, "display": print}
    try:
        exec(compile(text, path, "exec", dont_inherit=True), namespace)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception:  # noqa: BLE001 - the notebook failed: report it as Python would, by cell
        lines = traceback.format_exc().splitlines()
        for k, line in enumerate(lines):
            marker = f'File "{path}", line '
            if marker in line:
                number = int(line.split(marker, 1)[1].split(",", 1)[0])
                cell, in_cell = cell_line(path, number)
                lines[k] = line.replace(f"{marker}{number}", f'File "{path}", cell {cell}, line {in_cell}')
        sys.stderr.write("\n".join(lines) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
