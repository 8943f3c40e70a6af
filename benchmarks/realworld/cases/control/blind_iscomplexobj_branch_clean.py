# source: https://github.com/jax-ml/jax/issues/9165
# pattern: inside @jax.jit, `if jnp.iscomplexobj(x):` and `if x.size == 0:` branch on dtype and size, both static properties of a traced array
# expect: no-flag
# family: control
# strictness: strict
# run: power(jnp.array([1 + 2j, 3 - 1j]))
import jax
import jax.numpy as jnp


@jax.jit
def power(x):
    if x.size == 0:
        return jnp.zeros((), dtype=jnp.float32)
    if jnp.iscomplexobj(x):
        x = jnp.abs(x)
    return jnp.sum(x**2)
