# source: https://github.com/jax-ml/jax/pull/3656
# pattern: `jax.nn.one_hot(labels, num_classes)` inside a jitted encoder where num_classes is an ordinary (traced) argument: the output shape depends on a traced value
# expect: flag JAX307|JAX304
# family: control
# strictness: strict
# run: encode(jnp.array([0, 2, 1]), 3)
import jax
import jax.numpy as jnp


@jax.jit
def encode(labels, num_classes):
    onehot = jax.nn.one_hot(labels, num_classes)
    return onehot / jnp.maximum(onehot.sum(axis=0), 1.0)
