# source: https://github.com/patrick-kidger/equinox/issues/307
# pattern: the fix from the thread: `train` itself is a module-level eqx.filter_jit and the nested loss is a plain def, inlined into train's trace; the loop calls one stable jitted function
# expect: no-flag
# family: placement
# strictness: strict
# run: (module-level code)
import equinox as eqx
import jax
import jax.numpy as jnp


@eqx.filter_jit
def train(model, states, returns):
    def loss_fn(m, s, r):
        return jnp.mean((jax.vmap(m)(s)[:, 0] - r) ** 2)

    grads = eqx.filter_grad(loss_fn)(model, states, returns)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, model, grads)


model = eqx.nn.Linear(4, 1, key=jax.random.PRNGKey(0))
for episode in range(3):
    model = train(model, jnp.ones((8, 4)), jnp.zeros(8))
