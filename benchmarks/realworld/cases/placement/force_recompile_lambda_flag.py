# source: https://github.com/jax-ml/jax/issues/2570
# pattern: jit(lambda *args, **kw: f(*args, **kw))(...) inside a function called per measurement: a new lambda each call, a compile each call
# expect: flag JAX202
# family: placement
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp


def model(x, w):
    return jnp.tanh(x @ w)


def evaluate(x, w):
    return jax.jit(lambda *args, **kw: model(*args, **kw))(x, w)


for _ in range(10):
    evaluate(jnp.ones((4, 4)), jnp.eye(4))
