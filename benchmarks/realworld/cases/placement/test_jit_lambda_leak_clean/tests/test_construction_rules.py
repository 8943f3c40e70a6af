from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True, eq=False)
class Eager:
    n: int

    def __post_init__(self):
        object.__setattr__(self, "table", jnp.eye(self.n) * 3.0)


def apply_table(sim, x):
    return jax.jit(lambda v: sim.table @ v)(x)


def test_eager_table_survives_every_call_order():
    sim = Eager(3)
    for _ in range(3):
        out = apply_table(sim, jnp.ones(3))
        assert out.shape == (3,)
