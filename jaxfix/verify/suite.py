"""The project's own pytest suite as a source of inputs (zero configuration).

A project's tests already call its functions with realistic values; running the few test files
that reach a changed module, under the call recorder, gives inputs nobody had to write. This
module only decides *what* to run, cheaply and without importing user code: the project root,
whether it uses pytest, and which test files import the changed module directly or through the
project's import graph (stdlib `ast` over the project's own files). `gather.py` runs them.
"""

from __future__ import annotations

import ast
import configparser
import os
import sys
from pathlib import Path

ROOT_MARKERS = ("pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini", "setup.py", ".git")
SKIP_DIRS = {
    "__pycache__", "node_modules", "site-packages", "build", "dist", "venv", "env", ".venv", ".tox", ".nox",
    ".git", ".hg", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
}
MAX_FILES = 4000  # a project bigger than this is scanned only this far (the scan must stay cheap)
MAX_DIRS = 3000

_parsed: dict[tuple[str, float], list[tuple[str, int]]] = {}  # (file, mtime) -> imports


def project_root(path: str | os.PathLike) -> Path:
    """The nearest folder above `path` holding a project marker (pyproject.toml, .git, ...);
    the file's own folder when there is none."""
    file = Path(path).resolve()
    for folder in file.parents:
        if has_marker(folder):
            return folder
    return file.parent


def _is_test_file(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def has_marker(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in ROOT_MARKERS)


def python_files(root: Path, shallow: bool = False) -> list[Path]:
    """The project's .py files (hidden folders, environments and build output skipped). `shallow`:
    only `root` itself and its tests/ or test/ folder (a loose file in a folder that is not a
    project, such as /tmp, must not pick up unrelated tests further down)."""
    found: list[Path] = []
    for visited, (folder, dirs, files) in enumerate(os.walk(root)):
        if visited >= MAX_DIRS:
            break
        if shallow:
            depth = len(Path(folder).relative_to(root).parts)
            dirs[:] = [d for d in dirs if depth == 0 and d in ("tests", "test")]
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".") and not d.endswith(".egg-info"))
        if (Path(folder) / "pyvenv.cfg").exists():
            dirs[:] = []
            continue
        found.extend(Path(folder) / f for f in sorted(files) if f.endswith(".py"))
        if len(found) >= MAX_FILES:
            break
    return found


def uses_pytest(root: Path, files: list[Path] | None = None) -> str | None:
    """Why we think `root` has a pytest suite (for the report), or None."""
    pyproject = root / "pyproject.toml"
    if pyproject.exists():
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            tomllib = None  # type: ignore[assignment]
        text = pyproject.read_text(encoding="utf-8", errors="replace")
        if tomllib is not None:
            try:
                if "pytest" in tomllib.loads(text).get("tool", {}):
                    return "pyproject.toml [tool.pytest.ini_options]"
            except tomllib.TOMLDecodeError:
                pass
        elif "[tool.pytest" in text:
            return "pyproject.toml [tool.pytest.ini_options]"
    if (root / "pytest.ini").exists():
        return "pytest.ini"
    for name, section in (("setup.cfg", "tool:pytest"), ("tox.ini", "pytest")):
        if (root / name).exists():
            parser = configparser.ConfigParser()
            try:
                parser.read(root / name, encoding="utf-8")
            except configparser.Error:
                continue
            if parser.has_section(section):
                return f"{name} [{section}]"
    if (root / "tests").is_dir() or (root / "test").is_dir():
        return "a tests/ folder"
    if any(_is_test_file(f.name) for f in (files if files is not None else python_files(root))):
        return "test_*.py files"
    return None


def module_names(file: Path, root: Path) -> list[str]:
    """Names under which `file` can be imported: its package path, and its bare stem when it
    sits outside any package (pytest puts such a test's folder on sys.path)."""
    parts = [file.stem] if file.name != "__init__.py" else []
    folder = file.parent
    while (folder / "__init__.py").exists() and folder != root.parent:
        parts.insert(0, folder.name)
        folder = folder.parent
    return [".".join(parts)] if parts else []


def _imports(file: Path) -> list[tuple[str, int]]:
    """(module, level) for every import in `file`, `from a import b` also as `a.b`."""
    try:
        key = (str(file), file.stat().st_mtime)
    except OSError:
        return []
    if key in _parsed:
        return _parsed[key]
    try:
        tree = ast.parse(file.read_bytes())
    except (SyntaxError, ValueError):
        tree = ast.Module(body=[], type_ignores=[])
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, 0) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            found.append((base, node.level))
            found.extend((f"{base}.{alias.name}" if base else alias.name, node.level) for alias in node.names)
    _parsed[key] = found
    return found


def _resolve(name: str, level: int, importer: Path, root: Path) -> str:
    if not level:
        return name
    package = module_names(importer, root)
    base = package[0].split(".") if package else []
    base = base[:-level] if importer.name != "__init__.py" else base[: len(base) - level + 1]
    return ".".join([*base, name] if name else base)


def importers(target: Path, files: list[Path], root: Path) -> set[Path]:
    """Every project file that imports `target`, directly or through other project files.

    Breadth first from `target`; a file is parsed only when its text names the last part of a
    module found so far (an import of `a.b.core` or `from .core import` says "core"), so a big
    project costs a text search, not a parse of every file."""
    if not target.stem.isidentifier():
        return set()  # `traced_if.before.py` cannot be imported by name
    texts: dict[Path, bytes] = {}
    for file in files:
        try:
            texts[file] = file.read_bytes()
        except OSError:
            continue
    found: set[Path] = set()
    frontier = {target}
    while frontier:
        names = {name for module in frontier for name in module_names(module, root)}
        words = {name.rpartition(".")[2].encode() for name in names}
        # a package's __init__ re-exporting the module is found through the package's own name
        reached: set[Path] = set()
        for file, text in texts.items():
            if file in found or file == target or not any(word in text for word in words):
                continue
            for name, level in _imports(file):
                pieces = _resolve(name, level, file, root).split(".")
                if any(".".join(pieces[:end]) in names for end in range(len(pieces), 0, -1)):
                    reached.add(file)
                    break
        found |= reached
        frontier = reached
    return found


def select_tests(path: str | os.PathLike, root: Path | None = None) -> tuple[Path, str | None, list[Path]]:
    """(project root, why it looks like pytest or None, the test files that reach `path`)."""
    target = Path(path).resolve()
    root = root or project_root(target)
    files = python_files(root, shallow=not has_marker(root))
    why = uses_pytest(root, files)
    if why is None:
        return root, None, []
    if target not in files:
        files.append(target)
    reaching = importers(target, files, root)
    tests = {f for f in reaching if _is_test_file(f.name)}
    for conftest in (f for f in reaching if f.name == "conftest.py"):
        tests.update(f for f in files if _is_test_file(f.name) and conftest.parent in f.parents)
    if _is_test_file(target.name):
        tests.discard(target)
    return root, why, sorted(tests)


def pytest_command(root: Path, tests: list[Path]) -> list[str]:
    """The command that runs `tests`, leaving no cache behind. It goes on past failures: a test
    that fails for its own reasons (no network, a missing data file) must not keep the tests after
    it from running the changed code; the time budget bounds the run."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            *(str(t.relative_to(root)) if root in t.parents else str(t) for t in tests)]
