"""Discovery of golden fixture cases under fixtures/<family>/ (adding a case = adding files)."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    folder: Path
    positive: bool  # .in.py/.out.py pair; otherwise a .ok.py negative

    @property
    def id(self) -> str:
        return f"{self.family}/{self.name}"

    @property
    def input(self) -> Path:
        return self.folder / (f"{self.name}.in.py" if self.positive else f"{self.name}.ok.py")

    @property
    def expected(self) -> Path:
        return self.folder / (f"{self.name}.out.py" if self.positive else f"{self.name}.ok.py")

    @property
    def findings_file(self) -> Path:
        return self.folder / f"{self.name}.findings.txt"

    @property
    def driver(self) -> Path | None:
        path = self.folder / f"{self.name}.drive.py"
        return path if path.exists() else None

    @property
    def unsafe(self) -> bool:
        return self.name.endswith("_unsafe")


def discover_cases() -> list[Case]:
    cases = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []:
        for path in sorted(folder.glob("*.in.py")):
            cases.append(Case(folder.name, path.name[: -len(".in.py")], folder, True))
        for path in sorted(folder.glob("*.ok.py")):
            cases.append(Case(folder.name, path.name[: -len(".ok.py")], folder, False))
    return cases


_loaded = itertools.count()


def load_as_module(path: Path, source: str | None = None):
    """Run `source` (default: the file's text) as a fresh module named after `path` with a unique
    name: its own functions, so its own jit caches; registered in sys.modules, as dataclasses need."""
    name = f"_jaxfix_loaded_{path.stem.replace('.', '_')}_{next(_loaded)}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    sys.modules[name] = module
    exec(compile(source if source is not None else path.read_text(), str(path), "exec"), module.__dict__)
    return module


def run_jax3(source: str, unsafe: bool = False, preview: bool = True):
    """The traced control-flow rules (JAX3xx) on `source` (dedented), fixing: the result, after
    checking it analysed without error and that any rewritten text parses. With the findings shown
    only in preview mode unless `preview=False` (a test of the default tier): a negative case must
    hold for every finding the analysis makes, JAX305 (a preview rule) included."""
    import ast
    import textwrap

    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config

    config = Config(select=("JAX3",), unsafe_fixes=unsafe, preview=preview)
    result = analyze(textwrap.dedent(source), "t.py", config, fix=True)
    assert result.error is None, result.error
    if result.fixed_source is not None:
        ast.parse(result.fixed_source)
    return result


def analyze_in_project(
    tmp_path: Path, files: dict[str, str], checked: str, select: str, whole_tree: bool = True, preview: bool = False
):
    """`files` (name -> dedented text) written under `tmp_path`, indexed as one project, and rule
    `select` run on `checked` with that index (`whole_tree`: what `jaxfix check <folder>` builds; a
    list of files is not the whole tree; `preview`: preview findings too): the result, after checking it
    analysed without error."""
    import textwrap

    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config
    from jaxfix.engine.project import build_project_index

    paths = []
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        paths.append(str(path))
    project = build_project_index(paths)
    project.whole_tree = whole_tree
    source = (tmp_path / checked).read_text()
    result = analyze(source, str(tmp_path / checked), Config(select=(select,), preview=preview), project=project)
    assert result.error is None, result.error
    return result


def count_compiles(fn) -> int:
    """How many XLA compiles running `fn()` makes (jax's own compile events, the event the
    verifier counts: `jaxfix.verify.child.COMPILE_EVENT`)."""
    import jax.monitoring

    from jaxfix.verify.child import COMPILE_EVENT

    seen: list[str] = []

    def listen(event: str, duration: float, **kwargs) -> None:
        if event == COMPILE_EVENT:
            seen.append(event)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    return len(seen)
