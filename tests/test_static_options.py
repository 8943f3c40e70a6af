"""Static options written as a set display: `static_argnames={"order", "N", ...}` names its
arguments as Python values exactly as a tuple does (jit accepts any iterable of names).
jrmaddison/bt_ocean@<heldout30> finite_difference.py:113 (`diff_bounded`), gaussian_filter.py:23:
33 JAX3 findings on the static ints were labelled wrong while the set was not read. The twin whose
set names another argument is still reported; the set-decorated function runs under jit."""

from __future__ import annotations

import textwrap

from fixture_cases import load_as_module

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

SOURCE = """
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames={"N", "axis"})
def truncate(u, N, axis=-1):
    if N < 0:
        raise ValueError("N must be non-negative")
    return jnp.moveaxis(jnp.moveaxis(u, axis, -1)[..., :N], -1, axis)


@jax.jit
def pad(u, N):
    return truncate(u, N)
"""


def findings(source: str) -> list[tuple[str, int]]:
    result = analyze(textwrap.dedent(source), "fd.py", Config(select=("ALL",), preview=True))
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


def test_a_set_of_static_argnames_is_read_like_a_tuple(tmp_path):
    assert findings(SOURCE.split("@jax.jit")[0]) == []
    assert findings(SOURCE.split("@jax.jit")[0].replace('{"N", "axis"}', '("N", "axis")')) == []
    other = SOURCE.split("@jax.jit")[0].replace('{"N", "axis"}', '{"axis"}')
    assert [code for code, _ in findings(other)] == ["JAX301", "JAX307"]
    module = load_as_module(tmp_path / "fd.py", textwrap.dedent(SOURCE.split("@jax.jit")[0]))
    assert module.truncate(module.jnp.arange(6.0), N=3).tolist() == [0.0, 1.0, 2.0]


def test_a_set_of_static_argnums_too():
    source = SOURCE.split("@jax.jit")[0].replace('static_argnames={"N", "axis"}', "static_argnums={1, 2}")
    assert findings(source) == []


def test_static_options_not_written_out_claim_nothing():
    """`static_argnames=frozenset({"N"})` or `NAMES + ("M",)`: which arguments are
    static is not written out, and any parameter may be among them, so the jit proves none traced
    (the call summaries' `StaticSpec.unknown` says the same for other modules)."""
    head = SOURCE.split("@jax.jit")[0]
    constant = 'import jax.numpy as jnp\n\nNAMES = ("N",)\n'
    for spelled in ('frozenset({"N", "axis"})', 'NAMES + ("axis",)'):
        source = head.replace('{"N", "axis"}', spelled).replace("import jax.numpy as jnp\n", constant)
        assert findings(source) == [], spelled
    assert findings(head.replace('{"N", "axis"}', '{"axis"}')) != []
