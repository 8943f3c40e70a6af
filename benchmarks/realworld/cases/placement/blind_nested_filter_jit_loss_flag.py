# source: https://github.com/patrick-kidger/equinox/issues/307
# pattern: `train` defines its loss as a nested def decorated with eqx.filter_jit and differentiates it; train runs once per episode, so every episode compiles a new loss function
# expect: flag JAX202
# family: placement
# strictness: strict
# run: (module-level code)
import equinox as eqx
import jax
import jax.numpy as jnp


def train(model, states, returns):
    @eqx.filter_jit
    def loss_fn(m, s, r):
        return jnp.mean((jax.vmap(m)(s)[:, 0] - r) ** 2)

    grads = eqx.filter_grad(loss_fn)(model, states, returns)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, model, grads)


model = eqx.nn.Linear(4, 1, key=jax.random.PRNGKey(0))
for episode in range(3):
    model = train(model, jnp.ones((8, 4)), jnp.zeros(8))
