"""A policy rollout in a toy environment object, with discounted returns from a frozen config."""

from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class RolloutConfig:
    gamma: float = 0.95
    horizon: int = 5


class PointEnv:
    def __init__(self, goal):
        self.goal = goal

    def step(self, state, action):
        new_state = state + 0.1 * action
        reward = -jnp.sum((new_state - self.goal) ** 2)
        return new_state, reward


def policy(params, state):
    return jnp.tanh(params @ state)


def rollout(env, params, state, cfg: RolloutConfig):
    rewards = []
    for _ in range(cfg.horizon):
        action = jax.jit(lambda s: policy(params, s))(state)
        state, reward = jax.jit(env.step)(state, action)
        rewards.append(reward)
    return state, jnp.stack(rewards)


def returns(rewards, cfg: RolloutConfig):
    out, acc = [], jnp.float32(0.0)
    for t in range(rewards.shape[0] - 1, -1, -1):
        acc = jax.jit(lambda r, a: r + cfg.gamma * a)(rewards[t], acc)
        out.append(acc)
    return jnp.stack(out[::-1])
