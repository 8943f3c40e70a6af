# source: https://github.com/ott-jax/ott/blob/6aace50f/src/ott/problems/linear/linear_problem.py
# pattern: a register_pytree_node_class problem keeps tau_a/tau_b in tree_flatten's auxiliary data and exposes `is_balanced -> bool`; the jitted solver step (ott solvers/linear/sinkhorn.py) branches on both: static
# expect: no-flag
# family: control
# strictness: callgraph
# run: recenter(jnp.arange(3.0), Problem(jnp.ones(3))), recenter(jnp.arange(3.0), Problem(jnp.ones(3), tau_a=0.5))
import jax
import jax.numpy as jnp


@jax.tree_util.register_pytree_node_class
class Problem:
    def __init__(self, weights, tau_a=1.0):
        self.weights = weights
        self.tau_a = tau_a

    @property
    def is_balanced(self) -> bool:
        return self.tau_a == 1.0

    def tree_flatten(self):
        return [self.weights], {"tau_a": self.tau_a}

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        return cls(*children, **aux_data)


def center(f, prob: Problem):
    if prob.is_balanced:
        return f - jnp.mean(f * prob.weights)
    if prob.tau_a < 1.0:
        return f * prob.tau_a
    return f


@jax.jit
def recenter(f, prob):
    return center(f, prob)
