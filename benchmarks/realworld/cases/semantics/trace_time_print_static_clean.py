# source: https://github.com/google/jaxopt/issues/221
# pattern: print("compile....") and print of a static shape inside jit, a common way to see when tracing happens
# expect: no-flag
# family: semantics
# strictness: strict
# run: test(jnp.ones(2))
import jax


@jax.jit
def test(x):
    print("compile....")
    print("tracing with shape", x.shape, "dtype", x.dtype)
    return -((x + 2.0) ** 2)
