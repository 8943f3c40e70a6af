# source: https://github.com/QuantEcon/lecture-python-programming/pull/442
# pattern: the PR's fix: the same simulation with jax.lax.fori_loop and a body function
# expect: no-flag
# family: cost
# strictness: strict
import jax
import jax.numpy as jnp


@jax.jit
def compute_call_price(key, s0=10.0, h0=0.0, mu=1e-4, rho=0.1, nu=1e-3):
    def loop_body(i, state):
        s, h, key = state
        key, subkey = jax.random.split(key)
        z = jax.random.normal(subkey, (2, 10_000))
        s = s + mu + jnp.exp(h) * z[0, :]
        h = rho * h + nu * z[1, :]
        return s, h, key

    s, h, key = jax.lax.fori_loop(0, 1000, loop_body, (s0 + jnp.zeros(10_000), h0 + jnp.zeros(10_000), key))
    return jnp.mean(jnp.maximum(jnp.exp(s) - 100.0, 0.0))
