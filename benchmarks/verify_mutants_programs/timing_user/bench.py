"""Timing a jitted step as users write it: a running total, then the loss read as a float."""

import time

import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    return jnp.tanh(x @ x.T) @ x / 8.0


def bench_total(x: jax.Array, n: int):
    acc = jnp.zeros(())
    t0 = time.perf_counter()
    for _ in range(n):
        acc += jnp.sum(step(x))
    elapsed = time.perf_counter() - t0
    return acc, elapsed


def bench_pair(x: jax.Array):
    t0 = time.perf_counter()
    jnp.abs(step(x))
    elapsed = time.perf_counter() - t0
    return elapsed


if __name__ == "__main__":
    x = jnp.ones((64, 64)) / 64
    print(bench_total(x, 3)[0], bench_pair(x))
