"""hypothesmith-generated valid Python through all rules together (with fixes).

Arbitrary grammar-valid code rarely mentions jax, so each program is run twice: as
generated, and with a JAX header prepended and every function decorated with `@jax.jit`
(which passes every rule's prefilter and puts the code in traced context).
"""

from __future__ import annotations

import hypothesmith
import libcst as cst
from conftest import examples
from fuzz_support import check_properties
from hypothesis import given

from jaxfix.engine.config import Config

HEADER = "import functools\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax  # noqa: F401\n"


class _JitEverything(cst.CSTTransformer):
    def leave_FunctionDef(self, original, updated):
        deco = cst.Decorator(cst.Attribute(cst.Name("jax"), cst.Name("jit")))
        return updated.with_changes(decorators=(deco, *updated.decorators))


def jitted(source: str) -> str | None:
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    return HEADER + module.visit(_JitEverything()).code


def _check(source: str) -> None:
    for unsafe in (False, True):
        check_properties(source, Config(unsafe_fixes=unsafe))
    variant = jitted(source)
    if variant is not None:
        check_properties(variant, Config(unsafe_fixes=True))


@examples(fast=8, long=2000)
@given(source=hypothesmith.from_grammar())
def test_grammar_programs(source):
    _check(source)


@examples(fast=8, long=2000)
@given(source=hypothesmith.from_node())
def test_libcst_node_programs(source):
    _check(source)
