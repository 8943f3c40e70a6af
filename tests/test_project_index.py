"""The project index is built once per tree: summaries are cached by file content, built in
parallel when there are many files, and only when a selected rule reads them."""

from __future__ import annotations

import pickle
from pathlib import Path

from jaxfix.analysis.pytrees import ClassSummary, ModuleSummary
from jaxfix.engine.project import _SummaryStore, build_project_index

BASE = "import flax.struct\n\nclass Base(flax.struct.PyTreeNode):\n    x: int\n"
CHILD = "from pkg.base import Base\n\nclass Child(Base):\n    pass\n"


def make_pkg(tmp_path: Path) -> list[str]:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text(BASE)
    (pkg / "child.py").write_text(CHILD)
    return [str(pkg / name) for name in ("__init__.py", "base.py", "child.py")]


def test_cached_index_equals_fresh_and_is_read_back(tmp_path):
    files = make_pkg(tmp_path)
    cache = tmp_path / "cache"
    fresh = build_project_index(files)
    first = build_project_index(files, cache_dir=cache)
    assert first.modules == fresh.modules and first.paths == fresh.paths
    assert "pkg.child.Child" in first.pytree_classes()
    # Prove the second build reads the store: plant a different summary under child.py's key.
    code, summaries = pickle.loads((cache / _SummaryStore.FILE).read_bytes())
    assert len(summaries) == 3
    # each entry: the module's (pytree summary, call summary)
    key = next(k for k, (s, _) in summaries.items() if s.name == "pkg.child")
    planted = ModuleSummary("pkg.child", {"Planted": ClassSummary("Planted", 1, ("pkg.base.Base",), None, None)})
    summaries[key] = (planted, summaries[key][1])
    (cache / _SummaryStore.FILE).write_bytes(pickle.dumps((code, summaries)))
    second = build_project_index(files, cache_dir=cache)
    assert "pkg.child.Planted" in second.pytree_classes()
    # An edited file gets a new key: summarised again, the planted entry is dropped from the store.
    Path(files[2]).write_text(CHILD.replace("Child", "Other"))
    third = build_project_index(files, cache_dir=cache)
    assert set(third.pytree_classes()) == {"pkg.base.Base", "pkg.child.Other"}
    _, kept = pickle.loads((cache / _SummaryStore.FILE).read_bytes())
    assert len(kept) == 3 and not any("Planted" in s.classes for s, _ in kept.values())


def test_corrupt_store_is_a_miss(tmp_path):
    files = make_pkg(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / _SummaryStore.FILE).write_bytes(b"not a pickle")
    assert build_project_index(files, cache_dir=cache).modules == build_project_index(files).modules


def test_parallel_build_equals_serial(tmp_path):
    files = make_pkg(tmp_path)
    for i in range(70):  # above the pool threshold
        (tmp_path / "pkg" / f"m{i}.py").write_text(CHILD.replace("Child", f"C{i}"))
        files.append(str(tmp_path / "pkg" / f"m{i}.py"))
    (tmp_path / "pkg" / "broken.py").write_text("def (:\n")
    files.append(str(tmp_path / "pkg" / "broken.py"))
    serial = build_project_index(files, workers=1)
    parallel = build_project_index(files, workers=2)
    assert parallel.modules == serial.modules and parallel.paths == serial.paths
    assert list(parallel.errors) == [str(tmp_path / "pkg" / "broken.py")]
    assert len(parallel.pytree_classes()) == 72  # Base, Child and the 70 subclasses


def test_fingerprint_is_stable_across_store_round_trips_and_ignores_function_bodies(tmp_path):
    files = make_pkg(tmp_path)
    cache = tmp_path / "cache"
    fresh = build_project_index(files, cache_dir=cache)
    loaded = build_project_index(files, cache_dir=cache)  # every summary unpickled from the store
    assert loaded.fingerprint() == fresh.fingerprint()
    Path(files[2]).write_text(CHILD + "\n\ndef helper(x):\n    return x + 1\n")
    assert build_project_index(files, cache_dir=cache).fingerprint() == fresh.fingerprint()
    Path(files[2]).write_text(CHILD + "\n\nclass Extra(Base):\n    pass\n")
    assert build_project_index(files, cache_dir=cache).fingerprint() != fresh.fingerprint()


def test_lazy_index_answers_like_the_eager_one_and_parses_only_what_is_asked(tmp_path):
    files = make_pkg(tmp_path)
    (tmp_path / "pkg" / "unrelated.py").write_text("def (:\n")  # never asked about: never parsed
    files.append(str(tmp_path / "pkg" / "unrelated.py"))
    eager = build_project_index(files)
    lazy = build_project_index(files, lazy=True)
    assert not lazy.modules and set(lazy.pending) == {"pkg", "pkg.base", "pkg.child", "pkg.unrelated"}
    assert lazy.kind_of("pkg.child.Child") == eager.kind_of("pkg.child.Child") is not None
    assert set(lazy.modules) == {"pkg.base", "pkg.child"} and "pkg.unrelated" in lazy.pending
    assert lazy.pytree_classes() == eager.pytree_classes()  # a whole-project answer completes it
    assert not lazy.pending and list(lazy.errors) == [str(tmp_path / "pkg" / "unrelated.py")]
    assert lazy.paths == eager.paths
    assert lazy.fingerprint() == build_project_index(files).fingerprint()


def test_check_without_cache_uses_the_lazy_index_with_the_same_findings(tmp_path):
    from jaxfix.batch import BatchOptions, run_paths
    from jaxfix.engine.config import ConfigResolver

    files = make_pkg(tmp_path)
    # the class shows no instance read under a trace: JAX101 reports it with `unproven-pytrees`
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix.pytree-cache]\nunproven-pytrees = true\n")
    Path(files[2]).write_text(CHILD + "\n    @functools.cached_property\n    def total(self):\n        return self.x\n")
    Path(files[2]).write_text("import functools\n" + Path(files[2]).read_text())
    cached = run_paths([str(tmp_path / "pkg")], ConfigResolver(), BatchOptions(workers=1, cache_dir=str(tmp_path / "c")))
    uncached = run_paths([str(tmp_path / "pkg")], ConfigResolver(), BatchOptions(workers=1))
    codes = lambda outcome: [(f.path, f.line, f.code) for f in outcome.findings]  # noqa: E731
    assert codes(uncached) == codes(cached) and [c for _, _, c in codes(cached)] == ["JAX101"]


SAVEAT = """
import equinox as eqx
import jax


class SaveAt(eqx.Module):
    dense: bool = False
    solver_state: bool = False
    ts: jax.Array | None = None
"""
MISC = """
def is_tuple_of_ints(obj):
    return isinstance(obj, tuple) and all(isinstance(x, int) for x in obj)
"""
INTEGRATE = """
import equinox as eqx
import jax.numpy as jnp

from ._saveat import SaveAt
from diffrax._misc import is_tuple_of_ints


@eqx.filter_jit
def solve(y0, shape: jnp.ndarray, saveat: SaveAt):
    if saveat.dense:
        y0 = y0 * 2
    if is_tuple_of_ints(shape):
        y0 = y0 + 1
    if saveat.ts is not None and saveat.ts.sum() > 0:
        y0 = y0 - 1
    return y0
"""


def test_project_facts_keep_fields_and_own_helpers_static(tmp_path):
    """diffrax, checked as a whole: `saveat.dense` is a `bool` field of `SaveAt` (another module),
    so it is static under `eqx.filter_jit`; `diffrax._misc.is_tuple_of_ints` is the project's own
    helper, out of sight although `diffrax` is a known array library to its users. The array
    field `saveat.ts` is still traced."""
    from jaxfix.batch import BatchOptions, run_paths
    from jaxfix.engine.config import ConfigResolver

    pkg = tmp_path / "diffrax"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_saveat.py").write_text(SAVEAT)
    (pkg / "_misc.py").write_text(MISC)
    (pkg / "_integrate.py").write_text(INTEGRATE)
    outcome = run_paths([str(pkg)], ConfigResolver(), BatchOptions(workers=1))
    assert [(f.line, f.code) for f in outcome.findings] == [(15, "JAX301")]
    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config

    alone = analyze(INTEGRATE, str(pkg / "_integrate.py"), Config(select=("ALL",), preview=True))
    # without the project: the helper is out of sight (13: what it returns is a preview finding,
    # `traced_control_flow.evidence`), and `saveat`'s class too, so neither `saveat.dense` (11)
    # nor `saveat.ts` (15) is proven traced
    assert {f.line for f in alone.findings} >= {13} and not {11, 15} & {f.line for f in alone.findings}
    assert all(f.preview for f in alone.findings if f.line == 13)
