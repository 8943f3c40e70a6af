# source: https://github.com/ryan112358/mbi/pull/179
# pattern: large NumPy potentials are converted with `jax.tree.map(jnp.asarray, ...)` and passed to the jitted message passing as arguments, not read as globals
# expect: no-flag
# family: cost
# strictness: strict
# run: synthesize({"a": np.ones((50, 50)), "b": np.ones((50, 50))})
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def message_passing(potentials):
    return jax.tree.map(lambda p: jax.nn.logsumexp(p, axis=0), potentials)


def synthesize(potentials):
    potentials = jax.tree.map(jnp.asarray, potentials)
    return message_passing(potentials)
