# Trimmed from keraJLi/rejax@bc825f47f19b:purerl/algos/ppo/ppo.py (Apache-2.0); see case.toml.
from typing import Any, NamedTuple

import jax
import chex
import optax
import numpy as np
from jax import numpy as jnp
from flax.training.train_state import TrainState

from purerl.algos.algorithm import Algorithm
from purerl.normalize import RMSState, update_and_normalize

class PPOTrainState(TrainState):
    env_state: Any
    last_obs: chex.Array
    last_done: chex.Array
    global_step: chex.Array
    rms_state: RMSState
    rng: chex.PRNGKey

    def get_rng(self):
        rng, rng_new = jax.random.split(self.rng)
        return self.replace(rng=rng), rng_new

class PPO(Algorithm):

    @classmethod
    def train(cls, config, rng=None, train_state=None):
        if train_state is None and rng is None:
            raise ValueError("Either train_state or rng must be provided")

        ts = train_state or cls.initialize_train_state(config, rng)

        if not config.skip_initial_evaluation:
            initial_evaluation = config.eval_callback(config, ts, ts.rng)

        def eval_iteration(ts, unused):
            # Run a few training iterations
            iteration_steps = config.num_envs * config.num_steps
            num_iterations = np.ceil(config.eval_freq / iteration_steps).astype(int)
            ts = jax.lax.fori_loop(
                0,
                num_iterations,
                lambda _, ts: cls.train_iteration(config, ts),
                ts,
            )

            # Run evaluation
            return ts, config.eval_callback(config, ts, ts.rng)

        ts, evaluation = jax.lax.scan(
            eval_iteration,
            ts,
            None,
            np.ceil(config.total_timesteps / config.eval_freq).astype(int),
        )

        if not config.skip_initial_evaluation:
            evaluation = jax.tree_map(
                lambda i, ev: jnp.concatenate((jnp.expand_dims(i, 0), ev)),
                initial_evaluation,
                evaluation,
            )

        return ts, evaluation
