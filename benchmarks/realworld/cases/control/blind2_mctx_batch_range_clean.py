# source: https://github.com/google-deepmind/mctx/blob/b53073fd5035618228a717e29254e36ceb6f0645/mctx/_src/search.py#L60-L100
# pattern: a jitted batched search takes its batch size from a shape (`value.shape[0]`), builds `jnp.arange(batch_size)` and `jax.random.split(key, batch_size)` from it, defaults `max_depth` with `is None`, and loops with `fori_loop` over a static `num_simulations`: all static
# expect: no-flag
# family: control
# strictness: strict
# run: search(jnp.zeros((2, 3)), jnp.zeros(2), jax.random.PRNGKey(0), 4)
import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames=("num_simulations", "max_depth"))
def search(prior_logits, value, rng_key, num_simulations, max_depth=None):
    batch_size = value.shape[0]
    batch_range = jnp.arange(batch_size)
    if max_depth is None:
        max_depth = num_simulations
    visits = jnp.zeros((batch_size, num_simulations + 1), dtype=jnp.int32)

    def body_fun(sim, state):
        key, visits = state
        key, sub = jax.random.split(key)
        keys = jax.random.split(sub, batch_size)
        action = jax.vmap(jax.random.categorical)(keys, prior_logits)
        depth = jnp.minimum(sim + 1, max_depth)
        visits = visits.at[batch_range, depth].add((action >= 0).astype(jnp.int32))
        return key, visits

    _, visits = jax.lax.fori_loop(0, num_simulations, body_fun, (rng_key, visits))
    return visits
