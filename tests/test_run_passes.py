"""`jaxfix check` over a tree (issue #21): the call graph's roots come from the checks themselves,
a second pass re-analyses only what other modules' traced code enters, cached results are checked
against the modules they asked about, and a run answered from the cache imports no rule.

Real files in temporary folders, real subprocesses where the claim is about a process."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxfix.batch import BatchOptions, run_paths
from jaxfix.engine import analyze, registry
from jaxfix.engine.config import Config, ConfigResolver
from jaxfix.engine.project import NO_ENTRIES, build_project_index, module_facts

ROOT = Path(__file__).resolve().parents[1]
REALWORLD = ROOT / "benchmarks" / "realworld" / "cases"

HELPER = """import jax.numpy as jnp


def count(T, dt):
    return int(jnp.ceil(T / dt))
"""
CALLER = "import jax\nfrom pkg.helpers import count\n\n\n@jax.jit\ndef step(T):\n    return count(T, 0.1)\n"
BASE = "import flax.struct\n\n\nclass Base(flax.struct.PyTreeNode):\n    x: int\n"
CHILD = (
    "import functools\n\nimport jax\n\nfrom pkg.base import Base\n\n\nclass Child(Base):\n"
    "    @functools.cached_property\n    def total(self):\n        return self.x\n"
    # JAX101's evidence on a non-NNX pytree: traced code closing over an instance
    "\n\ndef reader(child: Child):\n    return jax.jit(lambda: child.total)\n"
)


def write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"pkg/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "pkg"


def codes(tmp_path: Path, **options) -> list[tuple[str, str]]:
    outcome = run_paths([str(tmp_path / "pkg")], ConfigResolver(), BatchOptions(**options))
    assert not outcome.file_errors
    return sorted((Path(f.path).name, f.code) for f in outcome.findings)


def test_module_facts_find_the_roots_the_index_finds_by_parsing():
    """The record a check makes of its module names the same call-graph roots as the index's own
    parse of each file, over the real-world corpus (files and multi-module folders)."""
    paths = sorted(str(p) for p in REALWORLD.rglob("*.py"))
    index = build_project_index(paths, lazy=True)
    by_index = set(index._trace_roots())
    by_facts = set()
    for name, (path, is_package) in build_project_index(paths, lazy=True).pending.items():
        text = Path(path).read_text(encoding="utf-8")
        record = module_facts(text, ast.parse(text), name, is_package, path)
        if record is not NO_ENTRIES:
            assert record[1].entries
            by_facts.add(name)
    assert by_facts == by_index and len(by_index) > 10


@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_entered_from_another_module_is_analysed_with_its_entries(tmp_path, workers):
    """Twelve modules, so that -j 2 starts a pool: the first pass analyses `helpers` as if nothing
    called it, the second with what `model`'s jitted code makes traced in it."""
    extra = {f"pkg/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(10)}
    write(tmp_path, {"pkg/helpers.py": HELPER, "pkg/model.py": CALLER, **extra})
    assert codes(tmp_path, workers=workers) == [("helpers.py", "JAX304")]
    paths = [str(p) for p in sorted((tmp_path / "pkg").glob("*.py"))]
    index = build_project_index(paths)
    helpers = str(tmp_path / "pkg" / "helpers.py")
    assert [f.code for f in analyze(HELPER, helpers, Config(), project=index).findings] == ["JAX304"]


def test_a_cached_result_is_checked_against_the_modules_it_asked_about(tmp_path, monkeypatch):
    """`Child` is a pytree through `Base` in another module: editing `base.py` so that `Base` is a
    plain class must not replay the cached JAX101; editing an unrelated module reuses it."""
    write(tmp_path, {"pkg/base.py": BASE, "pkg/child.py": CHILD, "pkg/other.py": "X = 1\n"})
    monkeypatch.chdir(tmp_path)
    cache = str(tmp_path / ".jaxfix_cache")
    assert codes(tmp_path, workers=1, cache_dir=cache) == [("child.py", "JAX101")]
    (tmp_path / "pkg" / "other.py").write_text("X = 2\n")
    outcome = run_paths([str(tmp_path / "pkg")], ConfigResolver(), BatchOptions(workers=1, cache_dir=cache))
    assert sorted((Path(f.path).name, f.code) for f in outcome.findings) == [("child.py", "JAX101")]
    reused = sorted(Path(o.result.path).name for o in outcome.files if o.cached)
    assert reused == ["__init__.py", "base.py", "child.py"]  # reused; other.py's bytes changed
    (tmp_path / "pkg" / "base.py").write_text("class Base:\n    x: int = 0\n")
    assert codes(tmp_path, workers=1, cache_dir=cache) == []
    assert codes(tmp_path, workers=1) == []


def test_an_edited_caller_changes_the_entries_of_a_cached_callee(tmp_path, monkeypatch):
    write(tmp_path, {"pkg/helpers.py": HELPER, "pkg/model.py": CALLER})
    monkeypatch.chdir(tmp_path)
    cache = str(tmp_path / ".jaxfix_cache")
    assert codes(tmp_path, workers=1, cache_dir=cache) == [("helpers.py", "JAX304")]
    assert codes(tmp_path, workers=1, cache_dir=cache) == [("helpers.py", "JAX304")]  # the tree's entries reused
    (tmp_path / "pkg" / "model.py").write_text(CALLER.replace("@jax.jit\n", ""))
    assert codes(tmp_path, workers=1, cache_dir=cache) == []
    (tmp_path / "pkg" / "model.py").write_text(CALLER)
    assert codes(tmp_path, workers=1, cache_dir=cache) == [("helpers.py", "JAX304")]


PROBE = """
import sys
import jaxfix.checkcmd
from jaxfix.cli import main
jaxfix.checkcmd.hard_exit = sys.exit  # a plain check leaves by os._exit: made a SystemExit here
sys.argv = ["jaxfix", "check", "-q", "-j", "2", "pkg"]
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in sys.modules if m == "libcst" or m.startswith(("codemods.", "jaxfix.rulebase", "jaxfix.analysis.jit")))
print(__import__("json").dumps({"code": code, "heavy": heavy}))
"""


def test_a_run_answered_from_the_cache_imports_no_rule_and_no_libcst(tmp_path):
    write(tmp_path, {"pkg/helpers.py": HELPER, "pkg/model.py": CALLER, "pkg/base.py": BASE, "pkg/child.py": CHILD})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def probe() -> dict:
        proc = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    first = probe()
    assert first["code"] == 1 and "libcst" in first["heavy"]
    second = probe()
    assert second == {"code": 1, "heavy": []}
    (tmp_path / "pkg" / "child.py").write_text(CHILD + "\n")  # one file changed: the rules are needed again
    assert probe()["heavy"]


def test_the_catalog_in_the_cache_folder_is_the_rules_own(tmp_path, monkeypatch):
    from jaxfix.engine import cache

    monkeypatch.setattr(registry, "_catalog_folder", [tmp_path])
    registry.catalog.cache_clear()
    try:
        cards = registry.catalog()
        assert cards == tuple(registry.RuleCard.of(rule) for rule in registry.all_rules())
        assert (tmp_path / "rules.pickle").is_file()
        registry.catalog.cache_clear()
        assert registry.catalog() == cards  # read back
        monkeypatch.setattr(cache, "code_fingerprint", lambda: "another code")
        (tmp_path / "rules.pickle").write_bytes(b"not a pickle")
        registry.catalog.cache_clear()
        assert registry.catalog() == cards  # a stale or broken catalog is made again
    finally:
        registry.catalog.cache_clear()


def test_a_file_naming_no_transform_is_analysed_once_with_its_entries(tmp_path, monkeypatch):
    """`helpers` names no jax transform, so it cannot be a root: it is analysed after the possible
    roots, when the propagation has told what `model`'s jitted code makes traced in it."""
    from jaxfix.engine import runner

    plain = "def count(T, dt):\n    print(T)\n    return T / dt\n"
    write(tmp_path, {"pkg/helpers.py": plain, "pkg/model.py": CALLER})
    analysed: list[str] = []
    real = runner.run_job
    monkeypatch.setattr(runner, "run_job", lambda job: analysed.append(Path(job.path).name) or real(job))
    assert codes(tmp_path, workers=1) == [("helpers.py", "JAX401")]
    assert analysed.count("helpers.py") == 1 and analysed.index("model.py") < analysed.index("helpers.py")


def test_a_worker_takes_the_queueing_process_text_test_only_for_the_bytes_it_tested(tmp_path):
    """`Job.root_text` spares the worker a search of the file's text; a file rewritten since it was
    tested (another checksum) is searched again, so a stale answer never hides a finding."""
    import zlib

    from jaxfix.engine.runner import Job, run_job

    path = tmp_path / "model.py"
    path.write_text("import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n")
    config = Config(select=("ALL",))
    stale = Job(str(path), config, False, module=("model", False), facts=True, root_text=(0, False))
    assert [f.code for f in run_job(stale).result.findings] == ["JAX301"]
    crc = zlib.crc32(path.read_bytes())
    trusted = Job(str(path), config, False, module=("model", False), facts=True, root_text=(crc, True))
    outcome = run_job(trusted)
    assert [f.code for f in outcome.result.findings] == ["JAX301"] and outcome.facts != NO_ENTRIES
