import jax


def drive(mod):
    kx, kw = jax.random.split(jax.random.PRNGKey(4))
    x = jax.random.normal(kx, (16, 3))
    y = x @ jax.random.normal(kw, (3,))
    out = mod.sweep(x, y)
    return {f"{m}_{lr}": v for (m, lr), v in out.items()}
