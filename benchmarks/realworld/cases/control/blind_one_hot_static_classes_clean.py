# source: https://github.com/jax-ml/jax/pull/3656
# pattern: the same encoder with num_classes in static_argnames: one_hot's output shape is a Python int at trace time
# expect: no-flag
# family: control
# strictness: strict
# run: encode(jnp.array([0, 2, 1]), num_classes=3)
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("num_classes",))
def encode(labels, num_classes):
    onehot = jax.nn.one_hot(labels, num_classes)
    return onehot / jnp.maximum(onehot.sum(axis=0), 1.0)
