# source: https://github.com/jax-ml/jax/issues/5017
# pattern: a fixed-step solver helper turns delta_t // max_dt into a jnp array and scans over jnp.arange(steps); it is reached from a jitted sim_function
# expect: flag JAX307
# family: control
# strictness: callgraph
# run: (module-level code)
import jax
import jax.numpy as jnp
from jax.lax import scan


def jaxfixedsolve(rhs, t_span, y0, max_dt):
    delta_t = t_span[1] - t_span[0]
    steps = jnp.array(delta_t // max_dt).astype(int)
    h = delta_t / steps

    def scan_func(carry, step):
        return carry + rhs(t_span[0] + h * step, carry) * h, None

    return scan(scan_func, y0, jnp.arange(steps))[0]


def sim_function(coeff):
    return jaxfixedsolve(lambda t, y: coeff * y, t_span=[0.0, 0.5], y0=jnp.array(1.0), max_dt=0.1)


jax.jit(sim_function)(2.0)
