# source: https://github.com/jax-ml/jax/issues/12789
# pattern: a large array is created inside the jitted function (`jnp.ones((500, 500, 500))` then `.at[].set`): it is computed by the program, not captured from a module-level global
# expect: no-flag
# family: cost
# strictness: strict
import time

import jax
import jax.numpy as jnp


@jax.jit
def foo():
    x = jnp.ones((500, 500, 500))
    return x.at[(100, 100, 100)].set(2)


for _ in range(2):
    start = time.time()
    _ = foo().block_until_ready()
    print(f"Time elapsed: {time.time() - start:.3}s")
