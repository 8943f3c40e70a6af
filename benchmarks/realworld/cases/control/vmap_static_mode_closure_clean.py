# source: https://github.com/zprihoda/zopt/blob/HEAD/zopt/jaxUtils.py
# pattern: a helper branches on a string `mode` that the jitted caller closes over as a Python constant and maps with jax.vmap; only x is batched
# expect: no-flag
# family: control
# strictness: callgraph
# run: interp_all(jnp.linspace(0, 1, 5), jnp.linspace(0, 1, 4), jnp.ones(4))
import jax
import jax.numpy as jnp


def interp_one(x, xp, fp, mode):
    if mode == "clip":
        x = jnp.clip(x, xp[0], xp[-1])
    elif mode == "periodic":
        x = jnp.mod(x - xp[0], xp[-1] - xp[0]) + xp[0]
    return jnp.interp(x, xp, fp)


@jax.jit
def interp_all(xs, xp, fp):
    return jax.vmap(lambda x: interp_one(x, xp, fp, "clip"))(xs)
