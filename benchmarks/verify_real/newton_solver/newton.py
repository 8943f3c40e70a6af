"""Scalar Newton iterations, documented with doctests."""

import jax
import jax.numpy as jnp


@jax.jit
def sqrt_newton(a, tol=1e-6):
    """Square root of a positive number by Newton's method.

    >>> float(sqrt_newton(jnp.float32(9.0)))
    3.0...
    >>> float(sqrt_newton(jnp.float32(2.0)))
    1.41...
    """
    x = a
    while jnp.abs(x * x - a) > tol * a:
        x = 0.5 * (x + a / x)
    return x


@jax.jit
def halve_until_small(x, limit):
    """How many halvings bring x below limit.

    >>> int(halve_until_small(jnp.float32(40.0), jnp.float32(1.0))[1])
    6
    """
    n = 0
    while x > limit:
        x = x / 2
        n = n + 1
    return x, n
