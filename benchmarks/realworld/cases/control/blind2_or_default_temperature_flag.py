# source: https://github.com/jax-ml/jax/pull/16430
# pattern: `temperature = temperature or 1.0` (the nullable-or-default idiom from the review thread) inside a jitted sampler that the module calls with an array temperature: `or` takes the truth value of a tracer
# expect: flag JAX305
# family: control
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp


@jax.jit
def sample_probs(logits, temperature=None):
    temperature = temperature or 1.0
    return jax.nn.softmax(logits / temperature)


probs = sample_probs(jnp.array([1.0, 2.0, 0.5]), jnp.float32(0.7))
