import jax
import jax.numpy as jnp


def drive(mod):
    preds = jax.random.normal(jax.random.PRNGKey(6), (3, 5, 2))
    ys = [jnp.linspace(0.0, 1.0, 4), jnp.ones(4) * 0.3]
    return {
        "median": mod.ensemble(preds),
        "mean": mod.ensemble(preds, avg_mode="mean", var_mode="scaled"),
        "blocks": mod.smooth_blocks(ys),
    }
