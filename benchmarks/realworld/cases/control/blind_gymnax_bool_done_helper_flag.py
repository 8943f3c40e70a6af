# source: https://github.com/RobertTLange/gymnax/issues/83
# pattern: an undecorated `step_entities` helper returns `bool(done > 0)`; it is only called from the jitted env step, where `done` is traced (TracerBoolConversionError)
# expect: flag JAX304
# family: control
# strictness: callgraph
# run: step(jnp.zeros(3), jnp.ones(3))
import jax
import jax.numpy as jnp


def step_entities(pos, vel):
    pos = pos + vel
    done = jnp.sum(pos > 9.0)
    return pos, bool(done > 0)


@jax.jit
def step(pos, vel):
    pos, done = step_entities(pos, vel)
    return pos, jnp.float32(done)
