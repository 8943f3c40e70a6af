import jax.numpy as jnp


def drive(mod):
    env = mod.PointEnv(jnp.array([1.0, -1.0]))
    params = jnp.array([[0.5, 0.0], [0.1, -0.3]])
    cfg = mod.RolloutConfig()
    state, rewards = mod.rollout(env, params, jnp.zeros(2), cfg)
    return {"state": state, "rewards": rewards, "returns": mod.returns(rewards, cfg)}
