# source: https://github.com/jax-ml/jax/issues/402
# pattern: a jitted MLP loops `for i in range(len(params) - 1)` over a Python list of layer dicts: the list length is pytree structure, static under jit
# expect: no-flag
# family: control
# strictness: strict
# run: mlp([{"w": jnp.ones((3, 3)), "b": jnp.zeros(3)}] * 3, jnp.ones(3))
import jax
import jax.numpy as jnp


@jax.jit
def mlp(params, x):
    for i in range(len(params) - 1):
        x = jnp.tanh(params[i]["w"] @ x + params[i]["b"])
    last = params[-1]
    return last["w"] @ x + last["b"]
