# source: https://github.com/OpenSourceEconomics/dcegm/pull/192
# pattern: a model factory builds a 2000x2000 wealth grid and returns a jitted solver closing over it: the 4M-element grid is embedded in the compiled program as a constant
# expect: flag JAX503
# family: cost
# strictness: hard
import jax
import jax.numpy as jnp


def make_solver(n_grid):
    grid = jnp.linspace(0.0, 10.0, n_grid * n_grid).reshape(n_grid, n_grid)
    utility = jnp.log1p(grid)

    @jax.jit
    def solve(beta):
        return jnp.max(utility + beta * grid, axis=1)

    return solve


solver = make_solver(2000)
policy = solver(0.95)
