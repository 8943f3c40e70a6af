# source: https://github.com/JaxGaussianProcesses/GPJax/blob/046d07a97a94b5aac67f58c8b1fa3828e2a37e40/gpjax/fit.py#L130-L165
# pattern: `fit` defines `loss` and a scan `step` per call; `step` calls `jax.value_and_grad(loss)` inside the `lax.scan` body (traced: inlined, nothing compiles per call) and branches on the closed-over Python int `batch_size`
# expect: no-flag
# family: placement
# strictness: strict
# run: fit({"w": jnp.float32(1.0), "b": jnp.float32(0.0)}, jnp.arange(8.0), 2 * jnp.arange(8.0), num_iters=5, batch_size=4)
import jax
import jax.numpy as jnp


def fit(params, xs, ys, num_iters=100, batch_size=-1, lr=0.01, key=jax.random.PRNGKey(42)):
    def loss(p, batch):
        x, y = batch
        return jnp.mean((p["w"] * x + p["b"] - y) ** 2)

    iter_keys = jax.random.split(key, num_iters)

    def step(carry, key):
        params = carry
        if batch_size != -1:
            idx = jax.random.choice(key, xs.shape[0], (batch_size,))
            batch = (xs[idx], ys[idx])
        else:
            batch = (xs, ys)
        loss_val, grads = jax.value_and_grad(loss)(params, batch)
        params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return params, loss_val

    params, history = jax.lax.scan(step, params, iter_keys)
    return params, history
