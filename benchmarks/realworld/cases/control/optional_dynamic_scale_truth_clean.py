# source: https://github.com/google/flax/blob/18f8f311/examples/imagenet/train.py
# pattern: `if dynamic_scale:` inside a jitted train step, where dynamic_scale is a loss-scaling object or None whose `.value_and_grad` the branch calls: the truth of an object is a Python bool
# expect: no-flag
# family: control
# strictness: strict
# run: train_step(jnp.ones(3), None), train_step(jnp.ones(3), Scale(2.0))
import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class Scale:
    factor: float

    def value_and_grad(self, fn):
        def wrapped(x):
            value, grad = jax.value_and_grad(fn)(x * self.factor)
            return value / self.factor, grad

        return wrapped


def loss(x):
    return jnp.sum(x**2)


@jax.jit
def train_step(x, dynamic_scale):
    if dynamic_scale:
        value, grad = dynamic_scale.value_and_grad(loss)(x)
    else:
        value, grad = jax.value_and_grad(loss)(x)
    return x - 0.1 * grad, value
