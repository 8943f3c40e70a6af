"""Pytree class detection (jaxfix.analysis.pytrees) and the cross-module ProjectIndex."""

from __future__ import annotations

import ast
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxfix.analysis.pytrees import pytree_classes
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.project import build_project_index, module_name_for
from jaxfix.rulebase import RuleContext

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pytree_cache_support import FIXTURES, compare  # noqa: E402

CROSS = FIXTURES / "cross_module"


def kinds(source: str, project=None, path="m.py") -> dict[str, str]:
    ctx = RuleContext(textwrap.dedent(source), path, project=project)
    return {name: info.kind for (name, _), info in pytree_classes(ctx).items()}


def test_every_kind_however_imported():
    found = kinds("""
        import dataclasses, functools
        import chex as ch
        import equinox
        import flax.struct
        from flax.struct import PyTreeNode as Node, dataclass as fdc
        from jax import tree_util as tu
        import jax.tree_util

        class A(Node): pass
        class A2(flax.struct.PyTreeNode): pass
        @fdc
        class B: pass
        @flax.struct.dataclass(frozen=True)
        class B2: pass
        @ch.dataclass
        class C: pass
        @ch.dataclass(frozen=True)
        class C2: pass
        class D(equinox.Module): pass
        @tu.register_pytree_node_class
        class E: pass
        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class F: pass
        @functools.partial(tu.register_dataclass, data_fields=[], meta_fields=[])
        @dataclasses.dataclass
        class F2: pass
        @dataclasses.dataclass
        class F3: pass
        tu.register_dataclass(F3, data_fields=[], meta_fields=[])
        class G: pass
        tu.register_pytree_node(G, lambda g: ((), None), lambda a, c: G())
        class H: pass
        jax.tree_util.register_pytree_with_keys(H, lambda h: ((), None), lambda a, c: H())
        class I: pass
        tu.register_pytree_node_class(I)
        """)
    assert found == {
        "A": "flax", "A2": "flax", "B": "flax", "B2": "flax", "C": "chex", "C2": "chex",
        "D": "equinox", "E": "pytree-node-class", "F": "register-dataclass",
        "F2": "register-dataclass", "F3": "register-dataclass", "G": "registered",
        "H": "registered", "I": "pytree-node-class",
    }  # fmt: skip


def test_inheritance_and_non_pytrees():
    found = kinds("""
        import dataclasses
        import equinox as eqx
        from flax import struct

        class Root(struct.PyTreeNode): pass
        class Mid(Root): pass
        class Leaf(Mid): pass
        class M(eqx.Module): pass
        class N(M): pass
        @struct.dataclass
        class Dec: pass
        class SubOfDecorated(Dec): pass        # not registered itself: no pytree
        @dataclasses.dataclass
        class Plain: pass
        class Loop(Loop2): pass                 # unknown / cyclic names never crash
        class Loop2(Loop): pass
        class PyTreeNode: pass                  # a local class with a famous name
        class Fake(PyTreeNode): pass
        """)
    assert found == {"Root": "flax", "Mid": "flax", "Leaf": "flax", "M": "equinox", "N": "equinox", "Dec": "flax"}


def test_module_names_follow_packages(tmp_path):
    pkg = tmp_path / "top" / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / "top" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("")
    (tmp_path / "script.py").write_text("")
    assert module_name_for(pkg / "mod.py") == ("top.sub.mod", False)
    assert module_name_for(pkg / "__init__.py") == ("top.sub", True)
    assert module_name_for(tmp_path / "script.py") == ("script", False)


def test_a_folder_no_import_can_name_is_no_package(tmp_path):
    """JAX-DIPS/JAX-DIPS@<heldout27>: the checkout folder `JAX-DIPS` has an `__init__.py`, but
    `import JAX-DIPS` cannot be written: `jax_dips/utils/inspect.py` is `jax_dips.utils.inspect`,
    as the project's own imports name it."""
    pkg = tmp_path / "JAX-DIPS" / "jax_dips" / "utils"
    pkg.mkdir(parents=True)
    for folder in (tmp_path / "JAX-DIPS", tmp_path / "JAX-DIPS" / "jax_dips", pkg):
        (folder / "__init__.py").write_text("")
    (pkg / "inspect.py").write_text("")
    assert module_name_for(pkg / "inspect.py") == ("jax_dips.utils.inspect", False)
    assert module_name_for(tmp_path / "JAX-DIPS" / "__init__.py") == ("__init__", True)


def test_project_index_resolves_bases_across_modules_and_pickles():
    files = sorted(str(p) for p in (CROSS / "pkg").rglob("*.py"))
    index = build_project_index(files)
    index = pickle.loads(pickle.dumps(index))
    assert index.pytree_classes() == {
        "pkg.base.Root": ("flax", "flax.struct.PyTreeNode"),
        "pkg.base.Base": ("flax", "Root"),
        "pkg.base.EqxBase": ("equinox", "equinox.Module"),
        "pkg.model.Model": ("flax", "pkg.Base"),  # through the package's re-export
        "pkg.model.Layer": ("equinox", "pkg.base.EqxBase"),  # through a relative import
    }
    assert index.kind_of("pkg.Base") == ("flax", "Root")
    assert index.kind_of("pkg.model.Plain") is None
    assert index.kind_of("nowhere.Thing") is None


def test_project_index_survives_bad_files(tmp_path):
    good = tmp_path / "good.py"
    good.write_text("import equinox as eqx\nclass M(eqx.Module):\n    pass\n")
    bad = tmp_path / "bad.py"
    bad.write_text("def broken(:\n")
    index = build_project_index([str(good), str(bad), str(tmp_path / "missing.py"), str(tmp_path / "x.txt")])
    assert set(index.modules) == {"good"}
    assert set(index.errors) == {str(bad), str(tmp_path / "missing.py")}


FIELD = Config(unsafe_fixes=True).with_options(
    "pytree-cache", **{"cache-style": "field", "unproven-pytrees": True}
)


def test_cross_module_findings_need_the_index():
    """The goldens are of the opt-in field style (`cache-style = "field"`)."""
    path = CROSS / "pkg" / "model.py"
    source = path.read_text()
    alone = analyze(source, str(path), FIELD, fix=True)
    assert alone.findings == []  # the base class lives elsewhere: nothing known, nothing flagged
    index = build_project_index(sorted(str(p) for p in (CROSS / "pkg").rglob("*.py")))
    result = analyze(source, str(path), FIELD, fix=True, project=index)
    assert result.error is None
    rows = sorted(f"{f.line}:{f.column} {f.code} {f.fix.safety.value}" for f in result.findings)
    assert rows == sorted((CROSS / "model.findings.txt").read_text().splitlines())
    assert result.fixed_source == (CROSS / "model.expected.py").read_text()
    again = analyze(result.fixed_source, str(path), FIELD, fix=True, project=index)
    assert again.fixed_source is None


_RUNNER = """
import pickle, sys
sys.path.insert(0, sys.argv[1])
import importlib.util
import numpy as np
import jax
spec = importlib.util.spec_from_file_location("drive", sys.argv[2])
drive = importlib.util.module_from_spec(spec); spec.loader.exec_module(drive)
import pkg.model as mod
out = drive.drive(mod)
out = {k: (v if isinstance(v, str) else np.asarray(v)) for k, v in out.items()}
sys.stdout.buffer.write(pickle.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.long
def test_cross_module_rewrite_behaves_like_original(tmp_path):
    """Run the original and the rewritten package in fresh interpreters with the same drive."""
    outputs = {}
    for version in ("orig", "new"):
        root = tmp_path / version
        shutil.copytree(CROSS / "pkg", root / "pkg")
        if version == "new":
            shutil.copy(CROSS / "model.expected.py", root / "pkg" / "model.py")
        proc = subprocess.run(
            [sys.executable, "-c", _RUNNER, str(root), str(FIXTURES / "flax_node_unsafe.drive.py")],
            capture_output=True,
            env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        outputs[version] = pickle.loads(proc.stdout)
    problems, improvements = compare(outputs["orig"], outputs["new"])
    assert problems == []
    assert outputs["orig"]["improves:closure_then_eager"] == "CRASH:UnexpectedTracerError"
    assert len(improvements) == 2


def test_could_match_sees_aliases_without_project():
    from codemods.pytree_cache.cached_property_on_pytree import (
        CachedPropertyOnPytreeRule,
    )
    from codemods.pytree_cache.method_cache_on_pytree import MethodCacheOnPytreeRule

    jax101, jax102 = CachedPropertyOnPytreeRule(), MethodCacheOnPytreeRule()
    assert jax101.could_match(
        ast.parse("from functools import cached_property as cp\nclass A(lib.Base):\n    @cp\n    def f(s): ...\n")
    )
    assert jax102.could_match(
        ast.parse("import functools as ft\nclass A(lib.Base):\n    @ft.lru_cache(8)\n    def f(s): ...\n")
    )
    for rule in (jax101, jax102):
        assert not rule.could_match(ast.parse("import functools\nclass A(lib.Base):\n    @property\n    def f(s): ...\n"))
        # a class with no base, no decorator and no registration call is never a pytree
        assert not rule.could_match(
            ast.parse("import functools\nclass A:\n    @functools.cached_property\n    def f(s): ...\n")
        )


def _jaxfix(*args, cwd):
    root = Path(__file__).resolve().parent.parent
    return subprocess.run(
        [sys.executable, "-m", "jaxfix", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
        timeout=300,
    )


UNPROVEN_TOML = "[tool.jaxfix.pytree-cache]\nunproven-pytrees = true\n"


@pytest.mark.slow
def test_cli_builds_the_project_index_and_reads_cache_style(tmp_path):
    """End to end: the CLI sees the base class in another file, and `cache-style` from pyproject.toml."""
    fielded = tmp_path / "fielded"
    shutil.copytree(CROSS / "pkg", fielded / "pkg")
    (fielded / "pyproject.toml").write_text(UNPROVEN_TOML + 'cache-style = "field"\n')
    proc = _jaxfix(
        "fix", ".", "--unsafe-fixes", "--write", "--allow-dirty", "--no-cache", "-q", "-j", "1", cwd=fielded
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert (fielded / "pkg" / "model.py").read_text() == (CROSS / "model.expected.py").read_text()

    other = tmp_path / "styled"
    shutil.copytree(CROSS / "pkg", other / "pkg")
    proc = _jaxfix("check", ".", "--no-cache", "-j", "1", cwd=other)  # no config: no instance read in a trace
    assert proc.stdout.count("JAX101") == 0 and proc.stdout.count("JAX102 [*]") == 1
    (other / "pyproject.toml").write_text(UNPROVEN_TOML)  # every pytree: the property style
    proc = _jaxfix("check", ".", "--no-cache", "-j", "1", cwd=other)
    assert proc.returncode == 1
    assert proc.stdout.count("JAX101 [*]") == 3 and proc.stdout.count("JAX102 [*]") == 1  # all safe
    (other / "pyproject.toml").write_text(UNPROVEN_TOML + 'cache-style = "property"\n')
    proc = _jaxfix("check", ".", "--no-cache", "-j", "1", cwd=other)
    assert proc.returncode == 1
    assert proc.stdout.count("JAX101 [*]") == 3 and proc.stdout.count("JAX102 [*]") == 1  # all safe
    (other / "pyproject.toml").write_text(UNPROVEN_TOML + 'cache-style = "cache"\n')
    proc = _jaxfix("check", ".", "--no-cache", "-j", "1", cwd=other)
    assert proc.returncode == 2 and "cache-style" in proc.stdout + proc.stderr


def test_project_local_registration_helpers_in_the_same_file():
    """brax `pytree.py`, jax_automl `dataclass_jax.py`: a function of the module that passes its
    parameter to a registering function is a registration helper; a class it decorates (or is
    called with at module level, or through a chain of helpers, or from a nested def) is a
    pytree of kind `registered` (how it flattens is the helper's business)."""
    found = kinds("""
        import dataclasses
        import functools
        import jax

        def register(cls):
            jax.tree_util.register_pytree_node(cls, lambda o: ((), None), lambda a, c: cls())
            return cls

        def struct(cls=None, **kwargs):
            def wrap(klass):
                klass = dataclasses.dataclass(frozen=True, **kwargs)(klass)
                return jax.tree_util.register_dataclass(klass, [], [])
            return functools.partial(struct, **kwargs) if cls is None else wrap(cls)

        def via_helper(cls):
            return register(cls)

        def tag(cls):                     # touches the class, registers nothing
            cls.tagged = True
            return cls

        @register
        class Body: pass
        @struct(frozen=True)
        class Params: pass
        @via_helper
        class Chained: pass
        class Called: pass
        register(Called)
        @tag
        @dataclasses.dataclass
        class Tagged: pass
        class SubOfRegistered(Body): pass    # jax registers exact types: no pytree
        """)
    assert found == {"Body": "registered", "Params": "registered", "Chained": "registered", "Called": "registered"}


def test_registration_helpers_and_subclass_hooks_across_modules(tmp_path):
    """ott `core/dataclasses.py`, stanza `dataclasses.py`: the helper lives in another module of
    the project (imported as a module, by name, or re-exported by the package); a base class whose
    `__init_subclass__` registers each subclass makes its subclasses pytrees, wherever they are."""
    pkg = tmp_path / "proj"
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .core.struct import dataclass\n")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "struct.py").write_text(textwrap.dedent("""
        import dataclasses
        import jax

        def register_pytree_node(cls):
            cls = dataclasses.dataclass()(cls)
            jax.tree_util.register_pytree_node(cls, lambda o: ((), None), lambda a, c: cls())
            return cls

        def dataclass(cls=None, **kwargs):
            cls = dataclasses.dataclass(frozen=True, **kwargs)(cls)
            return jax.tree_util.register_dataclass(cls, [], [])

        class Struct:
            def __init_subclass__(cls, **kwargs):
                super().__init_subclass__(**kwargs)
                register_pytree_node(cls)
        """))
    (pkg / "model.py").write_text(textwrap.dedent("""
        from proj import dataclass as pdc
        from proj.core import struct
        from proj.core.struct import Struct

        @struct.register_pytree_node
        class Geometry: pass
        @pdc
        class Policy: pass
        class State(Struct): pass
        class Deeper(State): pass
        @struct.dataclasses_like
        class Unknown: pass
        """))
    index = build_project_index(sorted(str(p) for p in pkg.rglob("*.py")))
    index = pickle.loads(pickle.dumps(index))
    found = {k: v for k, v in index.pytree_classes().items() if k.startswith("proj.model.")}
    assert found == {
        "proj.model.Geometry": ("registered", "proj.core.struct.register_pytree_node"),
        "proj.model.Policy": ("registered", "proj.dataclass"),
        "proj.model.State": ("registered", "proj.core.struct.Struct"),
        "proj.model.Deeper": ("registered", "State"),
    }
    assert kinds((pkg / "model.py").read_text()) == {}  # without the project nothing is known
