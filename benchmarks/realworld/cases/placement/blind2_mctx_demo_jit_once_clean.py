# source: https://github.com/google-deepmind/mctx/blob/b53073fd5035618228a717e29254e36ceb6f0645/examples/policy_improvement_demo.py#L108-L136
# pattern: a demo runner jits the module-level `_run_demo` once into a local name and calls it in a loop of runs; inside the trace a factory builds the recurrent function closure per call, which is inlined, not compiled
# expect: no-flag
# family: placement
# strictness: strict
# run: run(3)
import jax
import jax.numpy as jnp


def _make_bandit_recurrent_fn(qvalues):
    def recurrent_fn(action, embedding):
        reward = qvalues[jnp.arange(action.shape[0]), action]
        return reward, embedding + 1

    return recurrent_fn


def _run_demo(rng_key):
    rng_key, sub = jax.random.split(rng_key)
    qvalues = jax.random.uniform(sub, (4, 3))
    recurrent_fn = _make_bandit_recurrent_fn(qvalues)
    action = jnp.argmax(qvalues, axis=-1)
    reward, _ = recurrent_fn(action, jnp.zeros(4))
    return rng_key, reward.mean()


def run(num_runs):
    rng_key = jax.random.PRNGKey(0)
    jitted_run_demo = jax.jit(_run_demo)
    outputs = []
    for _ in range(num_runs):
        rng_key, output = jitted_run_demo(rng_key)
        outputs.append(output)
    return outputs
