# source: https://github.com/jax-ml/jax/pull/22098
# pattern: `if <constant> and <traced arg>:` inside a @jax.jit function (the constant does not make it static)
# expect: flag JAX301|JAX305
# family: control
# strictness: strict
# run: (module-level code)
import jax


@jax.jit
def gate(enabled):
    if True and enabled:
        return 1
    return 0


gate(True)
