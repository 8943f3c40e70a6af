# source: https://github.com/JaxGaussianProcesses/GPJax/blob/046d07a97a94b5aac67f58c8b1fa3828e2a37e40/examples/collapsed_vi.py#L230-L241
# pattern: timing jitted objectives with `timeit` on `nmll().block_until_ready()`: the clock is read after the work is done
# expect: no-flag
# family: cost
# strictness: strict
# run: (module-level code)
import timeit

import jax
import jax.numpy as jnp

x = jnp.linspace(0.0, 1.0, 200)


@jax.jit
def nmll():
    k = jnp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + 1e-3 * jnp.eye(x.shape[0])
    return -jnp.linalg.slogdet(k)[1]


nmll().block_until_ready()
elapsed = timeit.timeit(lambda: nmll().block_until_ready(), number=5)
