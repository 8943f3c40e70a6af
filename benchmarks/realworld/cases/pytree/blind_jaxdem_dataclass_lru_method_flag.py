# source: https://github.com/cdelv/JaxDEM/blob/HEAD/jaxdem/System.py
# pattern: a `jax.tree_util.register_dataclass` simulation system memoises a stiffness matrix with functools.lru_cache on a method: the cache keys on `self`, which is a fresh pytree (of tracers) in every trace
# expect: flag JAX102
# family: pytree
# strictness: strict
# run: step(System(jnp.float32(0.1), jnp.float32(2.0)), jnp.ones(3))
import dataclasses
import functools

import jax
import jax.numpy as jnp


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, eq=False)
class System:
    dt: jax.Array
    k: jax.Array

    @functools.lru_cache(maxsize=None)
    def stiffness(self, n):
        return self.k * jnp.eye(n)


@jax.jit
def step(system, x):
    return x - system.dt * (system.stiffness(3) @ x)
