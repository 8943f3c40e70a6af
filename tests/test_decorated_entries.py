"""A jit applied over another decorator wraps what that decorator returns: with one that keeps the
def's parameters (a vmap, a checkpoint, jaxtyping's `jaxtyped`, `chex.assert_max_traces`) the jit's
arguments are the def's parameters, traced; with any other (a project's own `@self_partial(d_model)`
returning a `jax.tree_util.Partial` that binds the leading parameters as Python values) they are
not known, and the def is no entry of the jit. FynnSu/transformer-from-scratch@<heldout30>
src/model.py: 21 JAX3 findings on the bound config ints and flags, all labelled wrong, and two
safe `fori_loop` fixes that broke the model (a traced index into its list of layer params). The
twin without the decorator is reported; the decorated function runs under jit with its Python
values."""

from __future__ import annotations

import textwrap

from fixture_cases import load_as_module

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

SOURCE = """
import chex
import jax
import jax.numpy as jnp
from jax import jit
from jax.tree_util import Partial


def self_partial(*args):
    return lambda x: Partial(x, *args)


def gen(config):
    n_layers = config["n_layers"]

    @jit
    @self_partial(n_layers)
    def encode(n_layers, params, x):
        for i in range(n_layers):
            x = jnp.tanh(x @ params[i])
        return x

    return encode


@jit
@chex.assert_max_traces(n=1)
def counted(n, x):
    if n > 2:
        return x
    return -x
"""


def findings(source: str) -> list[tuple[str, int]]:
    result = analyze(textwrap.dedent(source), "model.py", Config(select=("ALL",), preview=True))
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


def _line(text: str, source: str = SOURCE) -> int:
    return next(i + 1 for i, line in enumerate(textwrap.dedent(source).splitlines()) if text in line)


def test_a_jit_over_a_decorator_that_binds_parameters_is_no_entry(tmp_path):
    # only `counted`: chex's trace counter keeps the parameters, so `n` is traced there
    assert findings(SOURCE) == [("JAX301", _line("if n > 2"))]
    undecorated = SOURCE.replace("    @self_partial(n_layers)\n", "")
    assert ("JAX303", _line("for i in range(n_layers)", undecorated)) in findings(undecorated)
    # (run without `counted`: chex's trace counter reads the source of the function it wraps)
    module = load_as_module(tmp_path / "model.py", textwrap.dedent(SOURCE.split("@jit\n@chex")[0]))
    params = [module.jnp.eye(2), module.jnp.eye(2)]
    out = module.gen({"n_layers": 2})(params, module.jnp.ones((1, 2)))
    assert out.shape == (1, 2)
