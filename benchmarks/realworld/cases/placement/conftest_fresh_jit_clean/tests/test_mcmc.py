import jax.numpy as jnp


def test_chain_inside_jit(run_inside_jit):
    for state in (jnp.zeros(2), {"a": jnp.zeros(3)}, (jnp.ones(1), jnp.ones(2))):
        out = run_inside_jit(lambda s: s, state)
        assert out is not None
