# source: https://github.com/google/jaxopt/blob/2de13bf/examples/deep_learning/distributed_flax_imagenet.py
# pattern: a script's main calls train_and_evaluate once, which calls initialize_model once, which jits a nested init and calls it: one call, one compile
# expect: no-flag
# family: placement
# strictness: strict
# run: main()
import jax
import jax.numpy as jnp


def initialize_model(key, shape):
    @jax.jit
    def init(k):
        return jax.random.normal(k, shape)

    return init(key)


def train_and_evaluate(seed):
    params = initialize_model(jax.random.PRNGKey(seed), (4,))
    for _ in range(3):
        params = params * 0.9
    return jnp.sum(params)


def main():
    return train_and_evaluate(0)


if __name__ == "__main__":
    print(main())
