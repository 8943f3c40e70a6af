# source: https://github.com/patrick-kidger/equinox/issues/268
# pattern: an evaluation helper does `jax.jit(model.predict)(xs)`; a bound method is a new object on every attribute access, so each evaluation (once per epoch) retraces and recompiles
# expect: flag JAX202
# family: placement
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp


class Regressor:
    def __init__(self, w):
        self.w = w

    def predict(self, xs):
        return xs @ self.w


def evaluate(model, xs, ys):
    preds = jax.jit(model.predict)(xs)
    return jnp.mean((preds - ys) ** 2)


model = Regressor(jnp.ones(3))
for epoch in range(3):
    err = evaluate(model, jnp.ones((5, 3)), jnp.zeros(5))
