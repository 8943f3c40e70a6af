# Trimmed from instadeepai/Mava@8ae61c130cef:jax_distribution/systems/examples/ippo_anakin_example.py (Apache-2.0); see case.toml.
import timeit
from typing import NamedTuple, Sequence

import distrax
import flax.linen as nn
import jax
import jax.numpy as jnp
import jumanji
import numpy as np
import optax
from flax.linen.initializers import constant, orthogonal

class TimeIt:
    def __init__(self, tag, frames=None):
        self.tag = tag
        self.frames = frames

    def __enter__(self):
        self.start = timeit.default_timer()
        return self

    def __exit__(self, *args):
        self.elapsed_secs = timeit.default_timer() - self.start
        msg = self.tag + (": Elapsed time=%.2fs" % self.elapsed_secs)
        if self.frames:
            msg += ", FPS=%.2e" % (self.frames / self.elapsed_secs)
        print(msg)

def run_experiment(env, config):
    cores_count = len(jax.devices())
    num_actions = int(env.action_spec().num_values[0])
    network = ActorCritic(num_actions, activation=config["ACTIVATION"])
    optim = optax.chain(
        optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
        optax.adam(config["LR"], eps=1e-5),
    )

    rng = jax.random.PRNGKey(config["SEED"])
    rng, rng_env, rng_params = jax.random.split(rng, 3)

    init_obs = env.observation_spec().generate_value()
    init_obs = jax.tree_util.tree_map(
        lambda x: x[None, ...],
        init_obs,
    )

    params = network.init(rng_params, init_obs)
    opt_state = optim.init(params)

    # TODO: Complete this
    learn = get_learner_fn(
        env,
        network.apply,
        optim.update,
        config,
    )

    learn = jax.pmap(learn, axis_name="i")  # replicate over multiple cores.

    broadcast = lambda x: jnp.broadcast_to(
        x, (cores_count, config["BATCH_SIZE"]) + x.shape
    )
    params = jax.tree_map(broadcast, params)  # broadcast to cores and batch.
    opt_state = jax.tree_map(broadcast, opt_state)  # broadcast to cores and batch

    rng, *env_rngs = jax.random.split(rng, cores_count * config["BATCH_SIZE"] + 1)
    env_states, env_timesteps = jax.vmap(env.reset)(jnp.stack(env_rngs))  # init envs.
    rng, *step_rngs = jax.random.split(rng, cores_count * config["BATCH_SIZE"] + 1)

    reshape = lambda x: x.reshape((cores_count, config["BATCH_SIZE"]) + x.shape[1:])
    step_rngs = reshape(jnp.stack(step_rngs))  # add dimension to pmap over.
    env_states = jax.tree_util.tree_map(
        reshape,
        env_states,
    )  # add dimension to pmap over.
    env_timesteps = jax.tree_util.tree_map(
        reshape,
        env_timesteps,
    )
    # env_timesteps = reshape(env_timesteps)  # add dimension to pmap over.

    with TimeIt(tag="COMPILATION"):
        learn(params, opt_state, step_rngs, env_states, env_timesteps)  # compiles

    num_frames = (
        cores_count
        * config["ITERATIONS"]
        * config["ROLLOUT_LENGTH"]
        * config["BATCH_SIZE"]
    )
    print("num_frames", num_frames)
    with TimeIt(tag="EXECUTION", frames=num_frames):
        params, opt_state, step_rngs, env_states, env_timesteps = learn(  # runs compiled fn
            params, opt_state, step_rngs, env_states, env_timesteps, 
        )
