"""Screens that admit what their rule's analysis can report and no more (issue #33 item 7).

Each case is a shape of jax/flax code that a screen admitted to the libcst analysis although the
analysis reads the same fact more narrowly and reports nothing there: the screen now reads it as
the analysis does. Each has a twin the analysis reports, which the screen must still admit
(`screen_misses` is the soundness check the fixture and fuzz suites run on every screen).
"""

from __future__ import annotations

import ast

import pytest
from screen_support import screen_misses

from codemods.traced_control_flow.traced_if import TracedIfRule
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.rulebase import RuleContext


def _codes(source: str) -> list[str]:
    return [f.code for f in analyze(source, "m.py", Config()).findings]


def _screened_and_reported(source: str, rule, code: str | None) -> None:
    """`rule`'s screens admit `source` exactly when the analysis reports `code` there (None:
    reports nothing and is rejected), and no screen of any rule misses a finding."""
    tree = ast.parse(source)
    ctx = RuleContext(source, "m.py", options=Config().options(), tree=tree)
    admitted = rule.could_match(tree) and rule.could_match_in(ctx)
    assert admitted == (code is not None)
    assert _codes(source) == ([] if code is None else [code])
    assert screen_misses(source) == []


# -- the traced family (trace_screen) ----------------------------------------------------------

# jax's Pallas interpreter: `functools.partial(store, output_name=...)` built in traced code, a
# deferred call of `store` that binds what it passes (`JitPropagation.call_target`); the screen
# entered every parameter of `store` when any argument was traced
PARTIAL_IN_TRACE = """\
import functools

import jax


def store(x, scale, flag):
    if flag:
        x = x * scale
    return x


@jax.jit
def run(x):
    write = functools.partial(store, x, 2.0, flag="out")
    return write()
"""

# jax's decode attention: `jax.vmap(inner)` of a local `inner = partial(f, block_h=block_h, ...)`,
# whose bound values a jit's `static_argnames` keep Python; the analysis enters a vmap only through
# a name that means a def (`_unwrap`), so it never enters `unbatched` here
VMAP_OF_A_LOCAL_PARTIAL = """\
import functools

import jax


def unbatched(q, block):
    if block > 16:
        q = q * 2
    return q


@functools.partial(jax.jit, static_argnames=("block",))
def decode(q, block):
    inner = functools.partial(unbatched, block=block)
    return jax.vmap(inner)(q)
"""

# a lax body written in place as `partial(body, k)`: the loop passes the index and the carry, the
# parameters the partial leaves open (`JitContexts._partial_body`), not `k`
INLINE_PARTIAL_BODY = """\
import functools

import jax
from jax import lax


def body(k, i, acc):
    if k > 1:
        acc = acc * 2
    return acc + i


@jax.jit
def run(x):
    return lax.fori_loop(0, 4, functools.partial(body, 3), x)
"""

TRACED_CASES = [
    (PARTIAL_IN_TRACE, None),
    (PARTIAL_IN_TRACE.replace('flag="out"', "flag=x.sum() > 0"), "JAX301"),  # binds a traced value
    (VMAP_OF_A_LOCAL_PARTIAL, None),
    (VMAP_OF_A_LOCAL_PARTIAL.replace("block=block)", "block=q.sum())"), "JAX301"),
    (INLINE_PARTIAL_BODY, None),
    (INLINE_PARTIAL_BODY.replace("if k > 1:", "if acc.sum() > 1:"), "JAX301"),  # the carry is traced
]


@pytest.mark.parametrize(("source", "code"), TRACED_CASES)
def test_the_trace_screen_enters_what_a_partial_passes_as_the_analysis_does(source, code):
    _screened_and_reported(source, TracedIfRule(), code)
