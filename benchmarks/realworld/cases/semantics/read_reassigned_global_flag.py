# source: https://github.com/jax-md/jax-md/issues/161
# pattern: a jitted energy reads the module-level neighbour list `nbr`, which the driver loop reassigns: the jitted code keeps the value seen at trace time
# expect: flag JAX404
# family: semantics
# strictness: strict
# run: simulate(jnp.zeros((8, 3)), jnp.ones(8), steps=2)
import jax
import jax.numpy as jnp


def allocate(positions):
    return jnp.argsort(positions[:, 0])


nbr = allocate(jnp.zeros((8, 3)))


@jax.jit
def real_space(positions, charges):
    neighbor = nbr
    return jnp.sum(charges[neighbor] * positions[neighbor, 0])


def simulate(positions, charges, steps=10):
    global nbr
    for _ in range(steps):
        nbr = allocate(positions)
        energy = real_space(positions, charges)
        positions = positions + 0.01
    return energy
