# source: https://github.com/jax-ml/jax/issues/21792
# pattern: `jax.debug.print("step {i}: {x}", ...)` inside a lax.scan body under jit: a runtime print that sees real values every iteration
# expect: no-flag
# family: semantics
# strictness: strict
# run: run(jnp.ones(2))
import jax
import jax.numpy as jnp


@jax.jit
def run(x0):
    def body(x, i):
        x = 0.5 * x + 1.0
        jax.debug.print("step {i}: {x}", i=i, x=x)
        return x, jnp.sum(x)

    return jax.lax.scan(body, x0, jnp.arange(3))
