"""Inputs for verifying the fixes in this folder: `jaxfix fix examples/ --verify --examples examples/verify_examples.py`.

Each entry names a function, method or property (by qualified name) and the calls to make;
methods and properties take the instance first. `examples(mod)` picks the entries of the module
being verified (the NNX examples reuse the `jax.jit` examples' function names). See docs/verify.md.
"""

import jax.numpy as jnp

from jaxfix.verify import call

_JAX_EXAMPLES = {
    # Both sides of the branch, the boundary, and a value whose log would be NaN on the untaken side.
    "soft_clip": [call(jnp.float32(x)) for x in (3.0, 1.0, 0.5, -2.0)],
    # Zero, one and many trips of the while loop.
    "count_halvings": [call(jnp.float32(x)) for x in (0.5, 1.5, 100.0)],
    "run_partial": [call(jnp.linspace(-1.0, 1.0, 5)), call(jnp.ones(3), steps=2)],
    "run_lambda": [call(jnp.linspace(-1.0, 1.0, 5)), call(jnp.ones(3), steps=2)],
    "Gaussian.precision": lambda mod: [
        call(mod.Gaussian(mean=jnp.zeros(3), log_std=jnp.array([0.0, -0.5, 1.0])))
    ],
}


def _nnx_examples(mod) -> dict:
    name = mod.__name__.rpartition(".")[2]
    if name == "nnx_jit_in_loop":
        calls = [call(mod.Gain(5), jnp.linspace(-1.0, 1.0, 5)), call(mod.Gain(3), jnp.ones(3), steps=2)]
        return {"run_partial": calls, "run_lambda": calls}
    if name == "nnx_traced_branches":
        return {
            "soft_clip": [call(mod.Clip(), jnp.float32(x)) for x in (3.0, 1.0, 0.5, -2.0)],
            "count_halvings": [call(mod.Clip(), jnp.float32(x)) for x in (0.5, 1.5, 100.0)],
        }
    if name == "nnx_pytree_cache":
        return {"Gaussian.precision": [call(mod.Gaussian(jnp.zeros(3), jnp.array([0.0, -0.5, 1.0])))]}
    if name == "nnx_train":
        import optax
        from flax import nnx

        def step_calls():
            model = mod.MLP(4, 1, rngs=nnx.Rngs(0))
            optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
            return [call(model, optimizer, jnp.ones((8, 4)) * k, jnp.zeros((8, 1))) for k in (0.5, 4.0)]

        return {
            "train_step": step_calls(),
            "evaluate": [call(mod.MLP(4, 1, rngs=nnx.Rngs(0)), jnp.ones((8, 4)), jnp.zeros((8, 1)))],
            "train": [call(steps=3)],
        }
    return {}


def examples(mod) -> dict:
    return _nnx_examples(mod) or _JAX_EXAMPLES
