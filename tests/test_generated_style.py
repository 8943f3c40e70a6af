"""Generated code takes the style of the place it goes: the enclosing block's indentation (a
2-space function in a 4-space module) and the file's quote character."""

from __future__ import annotations

import textwrap

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

# The class sets the module's default indent (4); the jitted functions use 2.
HEADER = """\
import jax
import jax.numpy as jnp


class Config:
    def __init__(self):
        self.n = 3

"""


def _fix(body: str, *codes: str) -> str:
    source = HEADER + textwrap.dedent(body)
    result = analyze(source, "m.py", Config(select=codes, unsafe_fixes=True), fix=True)
    assert result.error is None, result.error
    assert result.fixed_source is not None, [f.message for f in result.findings]
    return result.fixed_source[len(HEADER) :]


def test_while_loop_body_takes_the_function_indent():
    fixed = _fix(
        """
        @jax.jit
        def count(x, n):
          i = 0
          while i < n:
            x = x * 2
            i = i + 1
          return x
        """,
        "JAX302",
    )
    assert fixed == textwrap.dedent(
        """
        @jax.jit
        def count(x, n):
          i = 0

          def loop_cond(carry):
            x, i = carry
            return i < n

          def loop_body(carry):
            x, i = carry
            x = x * 2
            i = i + 1
            return x, i

          x, i = jax.lax.while_loop(loop_cond, loop_body, (x, i))
          return x
        """
    )


def test_fori_body_keeps_nested_blocks_at_their_indent():
    fixed = _fix(
        """
        @jax.jit
        def total(x, n):
          for k in range(n):
            for j in range(2):
              x = x + j
            x = x * 1.5
          return x
        """,
        "JAX303",
    )
    assert fixed == textwrap.dedent(
        """
        @jax.jit
        def total(x, n):
          def loop_body(k, x):
            for j in range(2):
              x = x + j
            x = x * 1.5
            return x

          x = jax.lax.fori_loop(0, n, loop_body, x)
          return x
        """
    )


def test_cond_branches_take_the_function_indent():
    fixed = _fix(
        """
        @jax.jit
        def pick(x):
          if x.sum() > 0:
            y = x * 2
            z = x
          else:
            y = -x
            z = x + 1
          return y + z
        """,
        "JAX301",
    )
    assert "\n  def true_branch():\n    y = x * 2\n" in fixed
    assert "\n  def false_branch():\n    y = -x\n" in fixed


def test_new_string_literals_use_the_files_quotes():
    fixed = _fix(
        """
        @jax.jit
        def show(x):
          print('x is', x)
          return x


        def run(xs):
          for x in xs:
            f = jax.jit(lambda v, m: v[:m], static_argnames=('m',))
            f(x, 2)
        """,
        "JAX401",
        "JAX201",
    )
    assert "jax.debug.print('x is {}', x)" in fixed
    assert '"' not in fixed


def test_double_quotes_stay_the_default():
    fixed = _fix(
        """
        @jax.jit
        def show(x):
          print("x is", x)
          return x
        """,
        "JAX401",
    )
    assert 'jax.debug.print("x is {}", x)' in fixed


def test_pytree_cache_field_takes_the_class_indent():
    source = """\
from functools import cached_property

import jax.numpy as jnp
from flax import struct


def helper(x):
    if x:
        return 1
    return 2


class Model(struct.PyTreeNode):
  w: jnp.ndarray

  @cached_property
  def norm(self) -> jnp.ndarray:
    return jnp.sum(self.w**2)
"""
    field = Config(select=("JAX101",), unsafe_fixes=True).with_options(
        "pytree-cache", **{"cache-style": "field", "unproven-pytrees": True}
    )
    result = analyze(source, "m.py", field, fix=True)
    assert result.error is None, result.error
    assert result.fixed_source.endswith(
        """
  @property
  def norm(self) -> jnp.ndarray:
    if self._norm_cache is not None:
      return self._norm_cache
    return jnp.sum(self.w**2)

  def with_caches(self):
    \"\"\"Return a copy with the caches filled; call it outside jit.\"\"\"
    return self.replace(_norm_cache=self.norm)
"""
    )
