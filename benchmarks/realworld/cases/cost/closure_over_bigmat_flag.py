# source: https://github.com/jax-ml/jax/issues/16278
# pattern: jax.jit(lambda y: foo(y, bigmat)) closes over a large module-level array, which becomes a compile-time constant (OOM in the thread)
# expect: flag JAX503
# family: cost
# strictness: hard
import jax
import jax.numpy as jnp
import numpy as np

ns, ne, nq = 900, 1000, 800
bigmat = jnp.array(np.random.random((ne, nq, ns)))
x = jnp.empty(ns)


def foo(x, bigmat):
    def body(i, f):
        return f.at[i].set((bigmat[i] @ x).sum())

    return jax.lax.fori_loop(0, 1, body, jnp.zeros(x.shape[0]))


f = jax.jit(lambda y: foo(y, bigmat))(x)
