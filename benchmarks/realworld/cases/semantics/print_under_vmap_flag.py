# source: https://github.com/jax-ml/jax/pull/2591
# pattern: a plain function with print(y) is mapped with jax.vmap: y is a batch tracer
# expect: flag JAX401
# family: semantics
# strictness: callgraph
# run: (module-level code)
import jax.numpy as jnp
from jax import vmap


def f(x):
    y = x**2
    print(y)
    return y


out = vmap(f)(jnp.arange(4))
