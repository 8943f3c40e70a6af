# source: https://github.com/patrick-kidger/diffrax/blob/5ea5fcb05058bd22548300a10ea5ef5ce7fb75bb/benchmarks/lotka_volterra.py#L40-L66
# pattern: a benchmark times a jitted solve with `timeit.repeat(lambda: run(rtol, atol), ...)` without `block_until_ready`: the lambda returns at dispatch (measured here: 7 us reported vs 24 ms with blocking); a real bug in a mature library
# expect: flag JAX501
# family: cost
# strictness: strict
# run: (module-level code)
import timeit

import jax
import jax.numpy as jnp


@jax.jit
def run(rtol, atol):
    y = jnp.ones((400, 400)) * rtol
    for _ in range(3):
        y = jnp.tanh(y @ y) + atol
    return y.sum(), y[0, 0]


def time_run(rtol, atol):
    ys, _ = run(rtol, atol)
    return min(timeit.repeat(lambda: run(rtol, atol), repeat=5, number=1))


for rtol, atol in zip((1e-3, 1e-4), (1e-6, 1e-7)):
    time_run(rtol, atol)
