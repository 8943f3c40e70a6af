import jax.numpy as jnp


def drive(mod):
    g = mod.Gaussian(jnp.zeros(3), jnp.array([0.0, 0.5, -0.5]))
    return {
        "log_prob": mod.log_prob(g, jnp.ones(3)),
        "precision": g.precision,
        "clip_hi": mod.soft_clip(3.0),
        "clip_lo": mod.soft_clip(0.25),
        "halvings": mod.halvings(10.0),
        "halvings_0": mod.halvings(0.5),
    }
