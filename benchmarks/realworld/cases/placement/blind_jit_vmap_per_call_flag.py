# source: https://github.com/jax-ml/jax/issues/1832
# pattern: a batch helper returns `jax.jit(jax.vmap(energy))(xs)`: vmap returns a new function object each call, so every call from the sampling loop compiles again
# expect: flag JAX202
# family: placement
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp


def energy(x):
    return jnp.sum(x**2) - jnp.sum(jnp.cos(x))


def batched_energy(xs):
    return jax.jit(jax.vmap(energy))(xs)


xs = jnp.ones((4, 3))
for i in range(3):
    xs = xs * 0.9
    e = batched_energy(xs)
