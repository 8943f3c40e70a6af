# source: https://github.com/jax-ml/jax/issues/4615
# pattern: print("JUtotal: ", ret) inside a loss that is only ever differentiated with jax.grad (ret is a JVP tracer)
# expect: flag JAX401
# family: semantics
# strictness: callgraph
# run: (module-level code)
import jax
import jax.numpy as jnp


def total_energy(params, x):
    ret = jnp.sum(params * x**2)
    print("JUtotal: ", ret)
    return ret


grad_fn = jax.grad(total_energy)
g = grad_fn(jnp.ones(3), jnp.arange(3.0))
