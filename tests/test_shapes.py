"""jaxfix.analysis.shapes: one integer evaluator for libcst and stdlib-AST nodes, so the rules'
analysis and their screens agree on every static bound and size."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from jaxfix.analysis.shapes import (
    ast_module_int_constants,
    int_value,
    module_int_constants,
)

CONSTS = {"N": 100, "M": -3}
EXPRESSIONS = {
    "2 ** 10 - N // 3": 991,
    "-(N + 1) * 2": -202,
    "+M << 2": -12,
    "2 << M": None,  # a negative shift is not computed
    "1 << 4": 16,
    "2 ** 65": None,  # exponents above 64 are not computed
    "N // 0": None,
    "N // M": -34,
    "N / 2": None,  # true division gives a float
    "N % 7": None,
    "~N": None,
    "True + 1": None,  # a bool is not an integer literal here
    "0x10 * 1_000": 16_000,
    "unknown * 2": None,
    "N.real": None,
}


@pytest.mark.parametrize("text", sorted(EXPRESSIONS))
def test_int_value_is_the_same_on_both_trees(text):
    expected = EXPRESSIONS[text]
    assert int_value(cst.parse_expression(text), CONSTS) == expected
    assert int_value(ast.parse(text, mode="eval").body, CONSTS) == expected


def test_module_constants_on_both_trees():
    source = textwrap.dedent(
        """
        import jax

        N = 4
        M: int = N * 3
        K = M << 2
        TWICE = 1
        TWICE = 2
        GROWN = 1
        GROWN += 1
        A = B = 3
        X, Y = 1, 2
        for I in range(3):
            pass


        def f():
            global G


        G = 5
        """
    )
    strict = module_int_constants(cst.parse_module(source))
    screen = ast_module_int_constants(ast.parse(source))
    assert strict == {"N": 4, "M": 12, "K": 48}
    # the screen counts only top-level assignments (never fewer constants than the analysis)
    assert screen == {**strict, "G": 5}
