"""A 1-D random-walk Kalman filter, run as a script."""

from functools import partial
from numbers import Real

import jax
import jax.numpy as jnp


def kalman_update(state, obs, q, r):
    mean, var = state
    var = var + q
    gain = var / (var + r)
    mean = mean + gain * (obs - mean)
    var = (1.0 - gain) * var
    return (mean, var)


def filter_series(observations: list | None, q: Real = 0.01, r: Real = 0.5):
    if observations is None:
        observations = [0.0]
    state = (jnp.float32(0.0), jnp.float32(1.0))
    means = []
    for obs in observations:
        step = jax.jit(partial(kalman_update, q=q, r=r))
        state = step(state, obs)
        means.append(state[0])
    return jnp.stack(means)


if __name__ == "__main__":
    data = [0.1, 0.4, 0.35, 0.8, 1.1, 0.9]
    print(filter_series(data))
    print(filter_series(data, q=0.1, r=1.0))
