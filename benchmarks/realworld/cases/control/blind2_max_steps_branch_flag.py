# source: https://github.com/patrick-kidger/diffrax/issues/379
# pattern: a user passes `max_steps` as an ordinary argument of a jitted solve, and the solver branches with `if max_steps == 1:` on it: the argument is traced
# expect: flag JAX301
# family: control
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp


@jax.jit
def solve(y0, dt, max_steps):
    if max_steps == 1:
        return y0 + dt * jnp.sin(y0)

    def body(i, y):
        return y + dt * jnp.sin(y)

    return jax.lax.fori_loop(0, max_steps, body, y0)


y = solve(jnp.ones(2), 0.1, 16)
