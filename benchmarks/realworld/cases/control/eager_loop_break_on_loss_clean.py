# source: https://github.com/google-deepmind/optax/issues/1298
# pattern: a Python driver loop around a jitted step; `if loss < best - gtol: break` runs eagerly, outside any trace
# expect: no-flag
# family: control
# strictness: strict
# run: run(jnp.zeros(2), iters=5)
import jax
import jax.numpy as jnp
import optax

opt = optax.lbfgs()


def objective(x):
    return jnp.sum((x - 3.0) ** 2)


@jax.jit
def step(x, state):
    value, grad = optax.value_and_grad_from_state(objective)(x, state=state)
    updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=objective)
    return optax.apply_updates(x, updates), state, value


def run(x, iters=500, gtol=1e-9):
    state = opt.init(x)
    best = jnp.inf
    for _ in range(iters):
        x, state, loss = step(x, state)
        if loss < best - gtol:
            best = loss
        else:
            break
    return x
