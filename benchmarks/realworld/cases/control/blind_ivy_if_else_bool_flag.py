# source: https://github.com/ivy-llc/ivy/blob/HEAD/ivy/functional/backends/jax/control_flow_ops.py
# pattern: a backend `if_else(cond, body_fn, orelse_fn, vars)` helper does `bool(cond(*vars))` before lax.cond; called from a jitted function, cond(*vars) is traced
# expect: flag JAX304
# family: control
# strictness: callgraph
# run: step(jnp.float32(2.0))
import jax
import jax.numpy as jnp


def if_else(cond, body_fn, orelse_fn, vars):
    pred = bool(cond(*vars))
    return jax.lax.cond(pred, lambda: body_fn(*vars), lambda: orelse_fn(*vars))


@jax.jit
def step(x):
    return if_else(lambda v: v > 1.0, lambda v: v / 2, lambda v: v * 3 + 1, (x,))
