# source: https://github.com/jax-ml/jax/issues/15338
# pattern: jax.jit(self.do, static_argnums=1) built inside a method that a sampling loop calls each step: retraced every call
# expect: flag JAX202
# family: placement
# strictness: callgraph
# run: run(Sampler(), key)
import jax


class Sampler:
    def do(self, key, shape):
        return jax.random.uniform(key, shape)

    def draw(self, key):
        return jax.jit(self.do, static_argnums=1)(key, (2, 3, 4))


def run(sampler, key, steps=3):
    out = []
    for _ in range(steps):
        key, sub = jax.random.split(key)
        out.append(sampler.draw(sub))
    return out
