# source: https://github.com/energnn/energnn/pull/75
# pattern: a Trainer's `training_step` builds `jax.jit(jax.value_and_grad(loss_fn))` on every call (the PR moves it to `__init__`): value_and_grad makes a new function object each step, so every step traces and compiles again
# expect: flag JAX202
# family: placement
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp


def loss_fn(params, batch):
    x, y = batch
    return jnp.mean((x @ params - y) ** 2)


class Trainer:
    def __init__(self, params, lr):
        self.params = params
        self.lr = lr

    def training_step(self, batch):
        loss, grads = jax.jit(jax.value_and_grad(loss_fn))(self.params, batch)
        self.params = self.params - self.lr * grads
        return loss


trainer = Trainer(jnp.zeros(3), 0.1)
for step in range(3):
    trainer.training_step((jnp.ones((4, 3)), jnp.ones(4)))
