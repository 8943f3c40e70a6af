"""Static values computed inside a trace: the table of static-valued functions, tree maps of static
functions, the module's own shape/dtype helpers, and callees whose body is out of sight (issue #20)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxfix.analysis.jit_contexts import JitContexts, jit_contexts
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.static_helpers import ModuleCallOracle
from jaxfix.analysis.static_values import (
    STATIC,
    TRACED,
    UNKNOWN,
    is_known_library,
    is_static_call_name,
)
from jaxfix.analysis.traced import analyse_function
from jaxfix.rulebase import RuleContext


def traced_in(source: str, name: str = "f") -> set[str]:
    ctx = RuleContext(textwrap.dedent(source), "t.py")
    jc = ctx.fact(JitContexts, jit_contexts)
    [info] = [i for i in jc.functions.values() if i.name == name]
    assert info.facts is not None, f"{name} is not under a trace"
    return set(info.facts.all_traced)


@pytest.mark.parametrize(
    "qualname",
    [
        "jax.lax.broadcast_shapes",
        "jax.numpy.broadcast_shapes",
        "numpy.broadcast_shapes",
        "jax.numpy.shape",
        "numpy.ndim",
        "jax.numpy.size",
        "jax.numpy.issubdtype",
        "jax.numpy.iscomplexobj",
        "jax.numpy.isrealobj",
        "jax.numpy.result_type",
        "jax.numpy.finfo",
        "jax.dtypes.canonicalize_dtype",
        "jax.tree_util.tree_structure",
        "isinstance",
        "callable",
        "hasattr",
        "len",
    ],
)
def test_table_names_static_valued_functions(qualname):
    assert is_static_call_name(qualname)


@pytest.mark.parametrize("qualname", ["jax.numpy.sum", "jax.lax.cond", "jax.tree_util.tree_leaves", "helper", None])
def test_table_leaves_out_array_functions(qualname):
    assert not is_static_call_name(qualname)


def test_shape_and_dtype_queries_inside_jit_are_static():
    traced = traced_in(
        """
        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax import lax

        @jax.jit
        def f(p, n, x):
            shape = lax.broadcast_shapes(jnp.shape(p), jnp.shape(n))
            tail = shape + jnp.shape(p)[-1:]
            same = jnp.ndim(p) == jnp.ndim(n) and np.shape(p)[1:] == np.shape(n)[1:]
            eps = jnp.finfo(x.dtype).eps
            floating = jnp.issubdtype(x.dtype, jnp.floating) or jnp.iscomplexobj(x)
            kind = jnp.result_type(x), jnp.dtype(x.dtype), jax.dtypes.canonicalize_dtype(x.dtype)
            count = x.size * len(jax.tree_util.tree_leaves(p))
            checks = isinstance(x, tuple), callable(n), hasattr(p, "shape")
            treedef = jax.tree_util.tree_structure(p)
            y = jnp.broadcast_to(n, shape)
            return y
        """
    )
    assert {"p", "n", "x", "y"} <= traced
    assert not traced & {"shape", "tail", "same", "eps", "floating", "kind", "count", "checks", "treedef"}


def test_tree_map_of_a_static_function_is_static():
    traced = traced_in(
        """
        import jax
        import jax.numpy as jnp

        def leaf_rank(a):
            return jnp.ndim(a)

        @jax.jit
        def f(a, b):
            matches = jax.tree_util.tree_map(lambda x, y: jnp.ndim(x) == jnp.ndim(y) and jnp.shape(x)[1:] == jnp.shape(y)[1:], a, b)
            ok = jax.tree_util.tree_reduce(lambda x, y: x and y, matches, True)
            ranks = jax.tree.map(leaf_rank, a)
            sums = jax.tree_util.tree_map(lambda x: x + 1, a)
            mixed = jax.tree_util.tree_map(lambda x: jnp.shape(x) == b.shape and b > 0, a)
            return sums
        """
    )
    assert {"sums", "mixed"} <= traced  # a traced leaf, or a traced free variable, in the function
    assert not traced & {"matches", "ok", "ranks"}


def test_module_helpers_that_only_read_shapes_or_dtypes_return_static_values():
    traced = traced_in(
        """
        import jax
        import jax.numpy as jnp

        def is_floating(a):
            return jnp.issubdtype(a.dtype, jnp.floating)

        def _tree_and(tree):
            return jax.tree_util.tree_reduce(lambda x, y: x and y, tree, True)

        def same_shapes(a, b):
            matches = jax.tree_util.tree_map(lambda x, y: jnp.shape(x) == jnp.shape(y), a, b)
            return _tree_and(matches)

        def batch_dims(*args):
            return len(jax.lax.broadcast_shapes(*[jnp.shape(a) for a in args]))

        def doubled(a):
            return 2 * a

        def maybe(a):
            if a.ndim:
                return a.ndim
            return a

        @jax.jit
        def decorated(a):
            return a.ndim

        def shadowed(a):
            return a.shape

        @jax.jit
        def f(x, y):
            s1 = is_floating(x)
            s2 = same_shapes(x, y)
            s3 = batch_dims(x, y)
            t1 = doubled(x)
            t2 = maybe(x)
            t3 = decorated(x)
            shadowed = lambda a: a
            t4 = shadowed(x)
            return t1
        """
    )
    assert {"t1", "t2", "t3", "t4"} <= traced
    assert not traced & {"s1", "s2", "s3"}


def test_functions_imported_from_out_of_sight_modules_are_unknown_not_traced():
    traced = traced_in(
        """
        import jax
        import jax.numpy as jnp
        import mypkg.ops as ops
        from . import shapes
        from .shapes import needs_promotion
        from mypkg.state import State, norm
        from jax.numpy import linalg

        @jax.jit
        def f(x, y):
            u1 = needs_promotion(x, y)
            u2 = shapes.num_batch_dims(x, y)
            u3 = ops.rank(x)
            u4 = norm(x)
            t1 = State(x)
            t2 = linalg.norm(x)
            t3 = jnp.sum(x)
            return t3
        """
    )
    assert {"t1", "t2", "t3"} <= traced
    assert not traced & {"u1", "u2", "u3", "u4"}


def test_a_resolver_decides_out_of_sight_functions_first():
    source = textwrap.dedent(
        """
        import jax
        from mypkg.ops import rank, norm, other

        def f(x):
            a = rank(x)
            b = norm(x)
            c = other(x)
            return b
        """
    )
    module = cst.parse_module(source)
    names = ImportMap.from_module(module)
    verdicts = {"mypkg.ops.rank": STATIC, "mypkg.ops.norm": TRACED}
    oracle = ModuleCallOracle(module, names, resolve=verdicts.get)
    node = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    facts = analyse_function(node, names, {"x"}, calls=oracle)
    assert facts.all_traced == {"x", "b"}
    calls = {c.func.value: oracle.call_result(c) for c in _calls(node)}
    assert calls == {"rank": STATIC, "norm": TRACED, "other": UNKNOWN}


def test_known_libraries():
    assert is_known_library("jax.numpy") and is_known_library("numpy") and is_known_library("functools")
    assert not is_known_library("mypkg.ops") and not is_known_library("ops")


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            found.append(n)

    node.visit(V())
    return found


def test_equinox_shape_evaluation_and_leaf_predicates_are_static():
    """diffrax `_integrate.py`: `ok = eqx.filter_eval_shape(better_isinstance, ...)` then
    `if not ok: raise ...`, and `if any(eqx.is_array_like(x) and jnp.iscomplexobj(x) for x in
    leaves)`: Python values at trace time."""
    traced = traced_in(
        """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(x, y):
            s1 = eqx.filter_eval_shape(jnp.add, x, y)
            s2 = any(eqx.is_array_like(v) and jnp.iscomplexobj(v) for v in jax.tree_util.tree_leaves((x, y)))
            s3 = eqx.is_inexact_array(x)
            t1 = jnp.add(x, y)
            return t1
        """
    )
    assert "t1" in traced and not traced & {"s1", "s2", "s3"}


@pytest.mark.parametrize(
    ("annotation", "static"),
    [
        ("int", True),
        ("tuple[int, int]", True),
        ("tuple[int, ...]", True),
        ("int | None", True),
        ("Optional[int]", True),
        ("Callable[[int], int]", True),
        ("type[Base]", True),
        ("Literal['a', 'b']", True),
        ("Sequence[float]", True),
        ("jax.Array", False),
        ("tuple[jax.Array, int]", False),
        ("int | jax.Array", False),
        ("PyTree[int]", False),
        ("SaveAt", False),
    ],
)
def test_filter_jit_keeps_parameters_annotated_with_python_types_static(annotation, static):
    """diffrax `test/helpers.py`: `levels: tuple[int, int]` under `eqx.filter_jit`, then
    `for level in range(lo, hi + 1)`: filter_jit traces array leaves only."""
    traced = traced_in(
        f"""
        from collections.abc import Callable, Sequence
        from typing import Literal, Optional
        import equinox as eqx
        import jax

        @eqx.filter_jit
        def f(x, n: {annotation}):
            return x
        """
    )
    assert ("n" not in traced) is static


def test_a_literal_passed_directly_keeps_a_defaulted_parameter_static_a_jitted_call_does_not():
    """diffrax `_adjoint.py`: `_scan_fun(state, vals, first=False)` is a `lax.scan` body and is
    also called as `_scan_fun(state, val0, first=True)`; `made_jump=not first` is static. Through
    `jax.jit(jax.jacrev(f))(r, 0)` the same literal is traced."""
    source = """
        import jax
        import jax.numpy as jnp

        def body(state, x, first=False):
            flag = not first
            return state + x, flag

        def run(state, xs):
            state, _ = body(state, xs[0], first=True)
            return jax.lax.scan(body, state, xs)

        def radial(r, dr=0):
            order = dr + 1
            return r * order

        jac = jax.jit(jax.jacrev(radial))(jnp.ones(3), 0)
        """
    assert "flag" not in traced_in(source, "body")
    assert "order" in traced_in(source, "radial")


def test_fields_of_a_parameter_annotated_with_a_class_of_the_module_are_static_when_declared_python():
    traced = traced_in(
        """
        import equinox as eqx
        import jax

        class SaveAt(eqx.Module):
            dense: bool = False
            ts: jax.Array = None

        @eqx.filter_jit
        def f(y, saveat: SaveAt):
            s = saveat.dense
            t = saveat.ts
            return y
        """
    )
    assert "t" in traced and "s" not in traced


def test_fields_a_pytree_class_marks_static_are_static_on_any_object():
    """flax `struct.field(pytree_node=False)`: `cfg.training` is aux data wherever `cfg` comes
    from (here an unannotated jit argument); an array field of the same class is traced."""
    traced = traced_in(
        """
        import jax
        from flax import struct

        @struct.dataclass
        class Config:
            rate: jax.Array
            training: bool = struct.field(pytree_node=False, default=False)

        @jax.jit
        def f(cfg, x):
            s = cfg.training
            t = cfg.rate
            return x
        """
    )
    assert "t" in traced and "s" not in traced
