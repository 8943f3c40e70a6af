# source: https://github.com/PlasmaControl/DESC/issues/1191
# pattern: an objective's `build()` stores `jax.jit(jax.jacfwd(self.compute))` on self and the outer optimisation loop calls build() every iteration: a new transformed function each time, so the Jacobian recompiles every iteration
# expect: flag JAX201|JAX202
# family: placement
# strictness: hard
# run: optimize(Objective(jnp.ones(3)), jnp.ones(3), 3)
import jax
import jax.numpy as jnp


class Objective:
    def __init__(self, target):
        self.target = target

    def compute(self, x):
        return jnp.sin(x) - self.target

    def build(self):
        self._jac = jax.jit(jax.jacfwd(self.compute))


def optimize(objective, x, iterations):
    for _ in range(iterations):
        objective.build()
        J = objective._jac(x)
        x = x - jnp.linalg.solve(J + jnp.eye(3), objective.compute(x))
    return x
