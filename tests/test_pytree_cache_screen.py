"""The pytree-cache `could_match` screens (JAX101's and JAX102's), both ways, against the rules.

Positive cases are texts the rule reports on (screen bypassed) that the screen must admit,
including the ones that only a project index makes pytrees (a base class or a relatively
imported decorator from another file: `could_match` never sees the project). Negative cases are
classes with a cache that cannot be pytrees: the rule finds nothing and the screen rejects them.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from codemods.pytree_cache.cached_property_on_pytree import CachedPropertyOnPytreeRule
from codemods.pytree_cache.method_cache_on_pytree import MethodCacheOnPytreeRule
from jaxfix.engine.config import Config
from jaxfix.engine.project import build_project_index
from jaxfix.rulebase import RuleContext

RULES = (CachedPropertyOnPytreeRule(), MethodCacheOnPytreeRule())
# every pytree class reported (JAX101 otherwise needs a closed-over instance read under a trace)
UNPROVEN = Config().with_options("pytree-cache", **{"unproven-pytrees": True})


def screen_and_rule(source: str, path: str = "m.py", project=None) -> tuple[bool, list[str]]:
    """(admitted, the codes the rules' `check` report with the screens bypassed). Admitted: every
    rule that reports admits the text (`could_match`, then `could_match_in`); when none reports,
    some rule admits it."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    ctx = RuleContext(source, path, options=UNPROVEN.options(), project=project, tree=tree)
    reporting = [rule for rule in RULES if any(True for _ in rule.check(ctx))]
    codes = sorted(f.code for rule in reporting for f in rule.check(ctx))
    # the last screen is asked on a context of its own, holding no libcst module (as in the engine)
    unparsed = RuleContext(source, path, options=UNPROVEN.options(), project=project, tree=tree)

    def admits(rule) -> bool:
        return rule.could_match(tree) and rule.could_match_in(unparsed)

    if reporting:
        return all(admits(rule) for rule in reporting), codes
    return any(admits(rule) for rule in RULES), codes


POSITIVE = {
    "pytreenode_base": """
        import functools
        import jax.numpy as jnp
        from flax import struct

        class Model(struct.PyTreeNode):
            w: float

            @functools.cached_property
            def norm(self):
                return jnp.abs(self.w)
        """,
    "flax_dataclass_decorator": """
        from functools import cached_property as cp
        import flax.struct
        import jax.numpy as jnp

        @flax.struct.dataclass
        class Model:
            w: float

            @cp
            def norm(self):
                return jnp.abs(self.w)
        """,
    "partial_register_dataclass": """
        import functools
        import jax

        @functools.partial(jax.tree_util.register_dataclass, data_fields=["w"], meta_fields=[])
        class Model:
            w: float

            @functools.lru_cache(maxsize=None)
            def scaled(self, k):
                return self.w * k
        """,
    "registering_call": """
        import functools
        from jax.tree_util import register_pytree_node

        class Model:
            def __init__(self, w):
                self.w = w

            @functools.cache
            def scaled(self, k):
                return self.w * k

        register_pytree_node(Model, lambda m: ((m.w,), None), lambda _, c: Model(*c))
        """,
    "local_base_chain": """
        import functools
        import equinox as eqx
        import jax.numpy as jnp

        class Base(eqx.Module):
            w: float

        class Middle(Base):
            pass

        class Model(Middle):
            @functools.cached_property
            def norm(self):
                return jnp.abs(self.w)
        """,
    "chex_dataclass_lru_cache": """
        import functools
        import chex

        @chex.dataclass
        class Model:
            w: float

            @functools.lru_cache(8)
            def scaled(self, k):
                return self.w * k
        """,
}

NEGATIVE = {
    "plain_class": """
        import functools

        class Table:
            @functools.cached_property
            def rows(self):
                return [1, 2]
        """,
    "stdlib_dataclass": """
        import dataclasses
        import functools

        @dataclasses.dataclass(frozen=True)
        class Layout:
            n: int

            @functools.cached_property
            def size(self):
                return self.n * 2
        """,
    "bare_unknown_and_star_imported_bases": """
        import functools
        from flax.struct import *

        class Model(PyTreeNode):
            @functools.cached_property
            def norm(self):
                return 1

        class Other(Unknown):
            @functools.cache
            def f(self):
                return 1
        """,
    "local_base_not_a_pytree": """
        import functools

        class Base:
            pass

        class Model(Base):
            @functools.cached_property
            def norm(self):
                return 1
        """,
    "module_level_cache": """
        import functools

        @functools.cache
        def table(n):
            return list(range(n))
        """,
    "static_and_class_methods_only": """
        import functools
        import flax.struct

        class Model(flax.struct.PyTreeNode):
            @staticmethod
            @functools.cache
            def table(n):
                return n

            @classmethod
            @functools.lru_cache
            def make(cls):
                return cls()
        """,
    # a base of the standard library is no project module's class (`pytrees.NOT_PROJECT_HEADS`):
    # jax's `class StaggeredTransferPlan(TransferPlan)` with `class TransferPlan(Protocol)`
    "stdlib_bases": """
        import abc
        import functools
        import typing
        from typing import Protocol

        class Plan(Protocol):
            pass

        class Staggered(Plan):
            @functools.cached_property
            def norm(self):
                return 1

        class Other(typing.Generic, abc.ABC):
            @functools.cached_property
            def norm(self):
                return 1
        """,
    # a class passed to a builtin's method registers nothing (jax's `object.__new__(Mesh)`)
    "passed_to_a_builtin": """
        import functools

        class Mesh:
            @functools.cached_property
            def size(self):
                return 1

        def make():
            return object.__new__(Mesh)

        EMPTY = object.__new__(Mesh)
        """,
    "registering_call_for_another_class": """
        import functools
        import jax

        class Model:
            @functools.cached_property
            def norm(self):
                return 1

        class Other:
            pass

        jax.tree_util.register_pytree_node(Other, lambda o: ((), None), lambda _, c: Other())
        print(Model)
        jax.tree_util.register_pytree_node(type(Other()), lambda o: ((), None), lambda _, c: Other())
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_text_test_admits_what_the_rule_reports(name):
    source = textwrap.dedent(POSITIVE[name])
    assert screen_and_rule(source)[1], "a positive case the rules report"
    assert all(rule.passes_prefilter(source) for rule in RULES)


@pytest.mark.parametrize(
    "spelling",
    [
        "from functools import lru_cache as memo\n...\n    @memo(maxsize=None)",
        "import functools as ft\n...\n    @ft.cache",
        "from functools import cache as remember\n...\n    @remember",
        "import functools\n...\n    @functools.\\\n        cached_property",
    ],
)
def test_text_test_admits_every_spelling_of_a_cache(spelling):
    """The text test asks for a cache's own name: an alias is bound by an import that spells it."""
    imports, _, decorator = spelling.partition("\n...\n")
    source = f"{imports}\nimport flax.struct\n\n@flax.struct.dataclass\nclass M:\n    w: float\n\n{decorator}\n    def f(self):\n        return self.w\n"
    assert screen_and_rule(source)[1], source
    assert all(rule.passes_prefilter(source) for rule in RULES), source


def test_text_test_rejects_functools_without_a_cache():
    source = "import functools\n\nf = functools.partial(print, 1)\n"
    assert not any(rule.passes_prefilter(source) for rule in RULES)


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_screen_admits_what_the_rule_reports(name):
    admitted, codes = screen_and_rule(POSITIVE[name])
    assert codes, f"{name}: the case must be one the rule reports"
    assert admitted, f"{name}: the rule reports {codes} but the screen rejects it"


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_screen_rejects_classes_that_cannot_be_pytrees(name):
    admitted, codes = screen_and_rule(NEGATIVE[name])
    assert codes == [], f"{name}: the rule reports {codes}; not a negative case"
    assert not admitted, f"{name}: admitted, though no class with a cache can be a pytree"


def _package(tmp_path: Path, name: str, files: dict[str, str]) -> list[str]:
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    for file, text in files.items():
        (root / file).write_text(textwrap.dedent(text))
    return [str(p) for p in sorted(root.glob("*.py"))]


# the cached values are arrays: JAX101 does not report a cached plain Python value
MODEL = """
    import functools
    import jax.numpy as jnp
    {imports}

    class Model({base}):
        @functools.cached_property
        def norm(self):
            return jnp.ones(3)
    """


@pytest.mark.parametrize(
    "imports, base",
    [
        ("from .base import Base", "Base"),  # relative: the screen cannot resolve it
        ("from pkg.base import Base", "Base"),  # absolute, qualified to a dotted name
        ("from . import base", "base.Base"),
        ("import pkg.base", "pkg.base.Base"),
    ],
)
def test_a_base_from_another_module_is_admitted(tmp_path, imports, base):
    files = _package(
        tmp_path,
        "pkg",
        {
            "base.py": "import flax.struct\n\nclass Base(flax.struct.PyTreeNode):\n    pass\n",
            "model.py": MODEL.format(imports=imports, base=base),
        },
    )
    project = build_project_index(files)
    model = next(f for f in files if f.endswith("model.py"))
    admitted, codes = screen_and_rule(Path(model).read_text(), model, project)
    assert codes == ["JAX101"]
    assert admitted
    # without the project the rule cannot see the base: the screen still admits (it cannot know)
    assert screen_and_rule(Path(model).read_text(), model)[1] == []


@pytest.mark.parametrize(
    "imports, base",
    [("from .base import Base", "Base"), ("from pkg.base import Base", "Base"), ("import pkg.base", "pkg.base.Base")],
)
def test_a_base_the_project_knows_is_no_pytree_is_rejected_with_the_project(tmp_path, imports, base):
    """jax's `class NamedSharding(jsharding.Sharding)`: `could_match` cannot tell, the project can."""
    files = _package(
        tmp_path,
        "pkg",
        {
            "base.py": "import abc\n\nclass Base(abc.ABC):\n    pass\n",
            "model.py": MODEL.format(imports=imports, base=base),
        },
    )
    project = build_project_index(files)
    model = next(f for f in files if f.endswith("model.py"))
    source = Path(model).read_text()
    assert CachedPropertyOnPytreeRule().could_match(ast.parse(source))
    admitted, codes = screen_and_rule(source, model, project)
    assert codes == []
    assert not admitted


def test_a_relatively_imported_decorator_is_admitted(tmp_path):
    # inside a package named flax, `from .struct import dataclass` is flax.struct.dataclass
    files = _package(
        tmp_path,
        "flax",
        {
            "struct.py": "def dataclass(cls):\n    return cls\n",
            "model.py": """
                import functools
                import jax.numpy as jnp
                from .struct import dataclass as dc

                @dc
                class Model:
                    @functools.cached_property
                    def norm(self):
                        return jnp.ones(3)
                """,
        },
    )
    project = build_project_index(files)
    model = next(f for f in files if f.endswith("model.py"))
    admitted, codes = screen_and_rule(Path(model).read_text(), model, project)
    assert codes == ["JAX101"]
    assert admitted


def test_a_relatively_imported_registering_function_is_admitted(tmp_path):
    files = _package(
        tmp_path,
        "jax",
        {
            "tree_util.py": "def register_pytree_node(*a):\n    pass\n",
            "model.py": """
                import functools
                from .tree_util import register_pytree_node as reg

                class Model:
                    @functools.cache
                    def f(self):
                        return 1

                reg(Model, None, None)
                """,
        },
    )
    project = build_project_index(files)
    model = next(f for f in files if f.endswith("model.py"))
    admitted, codes = screen_and_rule(Path(model).read_text(), model, project)
    assert codes == ["JAX102"]
    assert admitted
