# source: https://github.com/jax-ml/jax/issues/2777
# pattern: `n` and `use_scan` marked static with static_argnums, so `if use_scan:` and `range(n)` are trace-time Python
# expect: no-flag
# family: control
# strictness: strict
# run: (sample(key, 3), sample(key, 3, True))
import functools

import jax
import jax.numpy as jnp


def inner_step(carry):
    key, ra, rb = carry
    key, shard = jax.random.split(key)
    gate = jax.random.uniform(shard, ra.shape)
    return key, 0.5 * (ra + gate * rb), 0.5 * (rb + gate * ra)


@functools.partial(jax.jit, static_argnums=(1, 2))
def sample(key, n, use_scan=False):
    carry = (key, jnp.ones((8, 2)), jnp.zeros((8, 2)))
    if use_scan:
        carry, _ = jax.lax.scan(lambda c, _: (inner_step(c), None), carry, None, length=n)
    else:
        for _ in range(n):
            carry = inner_step(carry)
    return carry[1]
