# source: https://github.com/google-deepmind/optax/issues/1171
# pattern: cond/body closures defined inside a jitted update and handed to lax.while_loop: traced inline, not compiled separately
# expect: no-flag
# family: placement
# strictness: strict
# run: backtrack(jnp.ones(2), -jnp.ones(2))
import jax
import jax.numpy as jnp


def value_fn(params):
    return jnp.sum(params**2)


@jax.jit
def backtrack(params, direction):
    max_steps = 20

    def cond_fn(state):
        step, lr, value = state
        return (step < max_steps) & (value > value_fn(params))

    def body_fn(state):
        step, lr, _ = state
        lr = lr * 0.5
        return step + 1, lr, value_fn(params + lr * direction)

    init = (0, jnp.asarray(1.0), value_fn(params + direction))
    return jax.lax.while_loop(cond_fn, body_fn, init)[1]
