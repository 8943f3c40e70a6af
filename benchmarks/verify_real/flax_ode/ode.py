"""A linear ODE integrated with RK4; the system matrix lives in a flax struct."""

import functools

import flax
import jax
import jax.numpy as jnp


@flax.struct.dataclass
class LinearSystem:
    a: jax.Array
    dt: float = flax.struct.field(pytree_node=False, default=0.1)

    @functools.cached_property
    def spectral_radius(self) -> jax.Array:
        return jnp.max(jnp.abs(jnp.linalg.eigvals(self.a)))

    def rhs(self, y):
        return self.a @ y


def rk4_step(system: LinearSystem, y):
    h = system.dt
    k1 = system.rhs(y)
    k2 = system.rhs(y + 0.5 * h * k1)
    k3 = system.rhs(y + 0.5 * h * k2)
    k4 = system.rhs(y + h * k3)
    return y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def integrate(system, y0, n_steps):
    ys = [y0]
    for _ in range(n_steps):
        ys.append(jax.jit(rk4_step)(system, ys[-1]))
    return jnp.stack(ys)


if __name__ == "__main__":
    system = LinearSystem(a=jnp.array([[0.0, 1.0], [-1.0, -0.1]]))
    print("spectral radius", system.spectral_radius)
    trajectory = integrate(system, jnp.array([1.0, 0.0]), 20)
    print(trajectory[-1])
