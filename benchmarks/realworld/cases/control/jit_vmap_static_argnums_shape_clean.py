# source: https://github.com/google/flax/blob/18f8f311/examples/lm1b/train.py
# pattern: jax.jit(jax.vmap(predict_step, in_axes=...), static_argnums=(3, 4)): vmap keeps positions, so max_decode_len is a static Python int where predict_step builds jnp.ones((n, max_decode_len))
# expect: no-flag
# family: control
# strictness: strict
# run: jit_pred(jnp.ones((2, 3)), jnp.float32(2.0), jnp.zeros(2), 0, 5)
import jax
import jax.numpy as jnp


def predict_step(inputs, scale, noise, eos_id, max_decode_len):
    target = jnp.ones((inputs.shape[0], max_decode_len)) * scale
    return target + noise + eos_id


jit_pred = jax.jit(jax.vmap(predict_step, in_axes=(0, None, 0, None, None)), static_argnums=(3, 4))
