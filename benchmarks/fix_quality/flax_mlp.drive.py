import jax
import jax.numpy as jnp


def drive(mod):
    model = mod.MLP()
    kx, kp = jax.random.split(jax.random.PRNGKey(2))
    xs = jax.random.normal(kx, (3, 8, 2))
    batches = [(xs[i], jnp.sin(xs[i, :, 0])) for i in range(3)]
    params = model.init(kp, xs[0])
    params, losses = mod.fit(model, params, batches)
    return {"losses": losses, "pred": mod.evaluate(model, params, xs[0])}
