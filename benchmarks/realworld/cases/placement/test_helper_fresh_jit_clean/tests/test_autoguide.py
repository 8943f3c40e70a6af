import jax
import jax.numpy as jnp


def guide_sample(key, scale):
    return scale * jax.random.normal(key, (2,))


def run_guide(scale):
    return jax.jit(lambda: guide_sample(jax.random.PRNGKey(9), scale))()


def test_guide_inside_jit():
    for scale in (1.0, 2.0, 3.0):
        out = run_guide(scale)
        assert out.shape == (2,)
        assert jnp.all(jnp.isfinite(out))
