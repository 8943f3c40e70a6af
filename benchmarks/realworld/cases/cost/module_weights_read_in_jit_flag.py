# source: https://github.com/jax-ml/jax/issues/10615
# pattern: a 2048x2048 weight matrix built at module level with a static size and read by a jitted predict: a large compile-time constant
# expect: flag JAX503
# family: cost
# strictness: strict
# run: run([jnp.ones((2, 2048))])
import jax
import jax.numpy as jnp
import numpy as np

W = jnp.asarray(np.random.randn(2048, 2048))


@jax.jit
def predict(x):
    return jnp.tanh(x @ W)


def run(batches):
    return [predict(b) for b in batches]
