# source: https://github.com/QuantEcon/lecture-python-programming/pull/442
# pattern: a Python `for t in range(1000)` simulation loop inside @jax.jit: unrolled into 1000 copies at trace time
# expect: flag JAX502
# family: cost
# strictness: strict
import jax
import jax.numpy as jnp


@jax.jit
def compute_call_price(key, s0=10.0, h0=0.0, mu=1e-4, rho=0.1, nu=1e-3):
    s, h = s0, h0
    for t in range(1000):
        key, subkey = jax.random.split(key)
        z = jax.random.normal(subkey, (2, 10_000))
        s = s + mu + jnp.exp(h) * z[0, :]
        h = rho * h + nu * z[1, :]
    return jnp.mean(jnp.maximum(jnp.exp(s) - 100.0, 0.0))
