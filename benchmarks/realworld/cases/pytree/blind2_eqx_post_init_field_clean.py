# source: https://github.com/patrick-kidger/equinox/issues/1034
# pattern: the derived value of an `eqx.Module` is a field (`eqx.field(init=False)`) set once in `__post_init__` instead of a cached property: it is a leaf, carried across every jit boundary, nothing cached in `__dict__`
# expect: no-flag
# family: pytree
# strictness: strict
# run: apply(Foo(jnp.float32(1.0), jnp.float32(2.0)), jnp.ones(3))
import equinox as eqx
import jax
import jax.numpy as jnp


class Foo(eqx.Module):
    a: jax.Array
    b: jax.Array
    norm: jax.Array = eqx.field(init=False)

    def __post_init__(self):
        self.norm = jnp.sqrt(self.a**2 + self.b**2)

    def __call__(self, x):
        return self.norm * self.a**2 + self.b**2 * x


@eqx.filter_jit
def apply(foo, x):
    return foo(x)
