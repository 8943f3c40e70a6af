# source: https://github.com/google/flax/blob/HEAD/flax/struct.py
# pattern: a flax struct.dataclass config whose `training` flag is `struct.field(pytree_node=False)`: inside jit `if cfg.training:` reads pytree metadata, a Python bool
# expect: no-flag
# family: control
# strictness: hard
# run: forward(Config(rate=jnp.float32(0.5), training=True), jnp.ones(4), key)
import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class Config:
    rate: jax.Array
    training: bool = struct.field(pytree_node=False, default=False)


@jax.jit
def forward(cfg, x, key):
    if cfg.training:
        keep = jax.random.bernoulli(key, 1.0 - cfg.rate, x.shape)
        x = jnp.where(keep, x / (1.0 - cfg.rate), 0.0)
    return jnp.tanh(x)
