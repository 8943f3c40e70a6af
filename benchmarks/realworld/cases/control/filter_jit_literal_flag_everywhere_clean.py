# source: https://github.com/patrick-kidger/equinox/blob/9336d82/tests/test_while_loop.py
# pattern: a flag parameter of an eqx.filter_jit function is passed True/False literals at every call: filter_jit keeps non-arrays static, so `if true:` is a Python branch
# expect: no-flag
# family: control
# strictness: strict
# run: compare(jnp.arange(3.0))
import equinox as eqx
import jax.numpy as jnp


@eqx.filter_jit
def run(x, checkpointed):
    if checkpointed:
        return jnp.cumsum(x)
    return jnp.cumsum(x[::-1])[::-1]


def compare(x):
    return run(x, checkpointed=True), run(x, checkpointed=False)
