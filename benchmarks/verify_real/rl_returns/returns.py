"""Discounted returns for a reinforcement-learning agent, with a frozen config."""

from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class ReturnConfig:
    gamma: float = 0.99
    normalize: bool = True


def discounted_returns(rewards: jax.Array, cfg: ReturnConfig):
    out = []
    running = jnp.float32(0.0)
    for t in range(rewards.shape[0] - 1, -1, -1):
        running = jax.jit(lambda r, acc: r + cfg.gamma * acc)(rewards[t], running)
        out.append(running)
    returns = jnp.stack(out[::-1])
    if cfg.normalize:
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    return returns


@jax.jit
def advantage_sign(advantages: jax.Array):
    total = jnp.sum(advantages)
    if total > 0:
        return advantages / (total + 1.0)
    return -advantages
