# source: https://github.com/jax-ml/jax/issues/7155
# pattern: a module-level @jax.jit inner function called ten times from a Python loop inside another @jax.jit function: inner jit is inlined in the outer trace, nothing is rebuilt per call
# expect: no-flag
# family: placement
# strictness: strict
# run: outer_fn(jnp.arange(5, dtype=jnp.uint32))
import jax
import jax.numpy as jnp


@jax.jit
def inner_fn(state):
    return 2 * state


@jax.jit
def outer_fn(x):
    old_x = x
    for _ in range(10):
        x = inner_fn(x)
    return x + old_x
