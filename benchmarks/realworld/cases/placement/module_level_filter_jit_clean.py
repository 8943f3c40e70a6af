# source: https://github.com/patrick-kidger/equinox/issues/973
# pattern: @eqx.filter_jit on a module-level function, warmed up and then called in a loop
# expect: no-flag
# family: placement
# strictness: strict
# run: (module-level code)
import equinox as eqx
import jax.numpy as jnp

model = eqx.nn.Identity()
x = jnp.zeros((1, 1))


@eqx.filter_jit
def fwd_eqx(m, x):
    return m(x)


for _ in range(10):
    fwd_eqx(model, x)
