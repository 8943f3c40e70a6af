# source: https://github.com/patrick-kidger/equinox/blob/090c4035a2a01d3fe0a6e959eb75cb2762a56f88/equinox/nn/_linear.py
# pattern: an eqx.Module __call__ with `if self.in_features == "scalar"`, `if jnp.shape(x) != ()`, `if self.bias is not None` and `assert jnp.shape(x) == (1,)`, run under filter_jit + vmap: all static
# expect: no-flag
# family: control
# strictness: callgraph
# run: batched(Dense(jnp.ones((1, 3)), jnp.ones(1), 3, "scalar"), jnp.ones((5, 3)))
from typing import Optional, Union

import equinox as eqx
import jax
import jax.numpy as jnp


class Dense(eqx.Module):
    weight: jax.Array
    bias: Optional[jax.Array]
    in_features: Union[int, str] = eqx.field(static=True)
    out_features: Union[int, str] = eqx.field(static=True)

    def __call__(self, x):
        if self.in_features == "scalar":
            if jnp.shape(x) != ():
                raise ValueError("x must have scalar shape")
            x = jnp.broadcast_to(x, (1,))
        x = self.weight @ x
        if self.bias is not None:
            x = x + self.bias
        if self.out_features == "scalar":
            assert jnp.shape(x) == (1,)
            x = jnp.squeeze(x)
        return x


@eqx.filter_jit
def batched(layer, xs):
    return jax.vmap(layer)(xs)
