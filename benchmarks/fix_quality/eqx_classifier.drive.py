import equinox as eqx
import jax
import jax.numpy as jnp


def drive(mod):
    key = jax.random.PRNGKey(3)
    model = eqx.nn.MLP(2, 3, 8, 1, key=key)
    xs = jax.random.normal(key, (3, 6, 2))
    data = [(xs[i], (xs[i, :, 0] > 0).astype(jnp.int32)) for i in range(3)]
    model, losses = mod.train(model, data)
    return {"losses": losses, "pred": mod.predict(model, xs[0])}
