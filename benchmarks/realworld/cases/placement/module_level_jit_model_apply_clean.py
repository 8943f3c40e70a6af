# source: https://github.com/google-deepmind/tapnet/issues/44
# pattern: model_apply = jax.jit(model.apply) once at module level, then called from a per-video inference function in a loop
# expect: no-flag
# family: placement
# strictness: strict
import haiku as hk
import jax
import jax.numpy as jnp


def build_model(frames):
    return hk.Linear(2)(frames)


model = hk.transform_with_state(build_model)
model_apply = jax.jit(model.apply)


def inference(params, state, frames):
    rng = jax.random.PRNGKey(42)
    outputs, _ = model_apply(params, state, rng, frames)
    return outputs


def run_all(params, state, videos):
    return [inference(params, state, jnp.asarray(v)) for v in videos]
