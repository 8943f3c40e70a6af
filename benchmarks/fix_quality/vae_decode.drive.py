import jax


def drive(mod):
    key = jax.random.PRNGKey(7)
    params = mod.init_decoder(key)
    zs = jax.random.normal(key, (3, 5, 2))
    xs = jax.random.uniform(key, (3, 5, 4))
    return {"errors": mod.evaluate(params, list(zs), list(xs)), "sum": mod.reconstruction_error(xs[0], xs[1], "sum")}
