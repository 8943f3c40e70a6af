import jax
import jax.numpy as jnp


def drive(mod):
    batches = mod.make_data(jax.random.PRNGKey(0))
    params = {"w": jnp.zeros(4), "b": jnp.zeros(())}
    return {
        "mse": mod.train(params, batches, mod.Config()),
        "mae": mod.train(params, batches, mod.Config(loss="mae", lr=0.1, epochs=1)),
    }
