# source: https://github.com/patrick-kidger/diffrax/blob/5ea5fcb05058bd22548300a10ea5ef5ce7fb75bb/benchmarks/jump_step_timing.py#L69-L82
# pattern: a timing harness jits a zero-argument closure per controller and decorates it with `eqx.debug.assert_max_traces(max_traces=1)`: each call compiles a new closure on purpose, and says so
# expect: no-flag
# family: placement
# strictness: hard
# run: (module-level code)
import timeit

import equinox as eqx
import jax
import jax.numpy as jnp

xs = jnp.linspace(0.0, 1.0, 64)


def do_timing(rate):
    @jax.jit
    @eqx.debug.assert_max_traces(max_traces=1)
    def time_controller_fun():
        return jnp.cumsum(jnp.exp(-rate * xs))

    def time_controller():
        jax.block_until_ready(time_controller_fun())

    return min(timeit.repeat(time_controller, number=3, repeat=5))


time_new = do_timing(0.5)
time_old = do_timing(2.0)
