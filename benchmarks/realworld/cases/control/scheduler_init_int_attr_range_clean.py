# source: https://github.com/jax-ml/jax/blob/jax-v0.10.2/jax/_src/pallas/mosaic/pipeline.py
# pattern: a plain class built inside a lax body stores an int-annotated constructor argument on self and loops over range(self.num_stages - 1): a Python int, not a traced bound (Scheduler.__init__)
# expect: no-flag
# family: control
# strictness: callgraph
# run: lookahead(jnp.arange(6.0))
import jax
import jax.numpy as jnp


class Prefetcher:
    def __init__(self, step: jax.Array, values: jax.Array, num_stages: int):
        self.step = step
        self.num_stages = num_stages
        self.windows = [values[step]]
        for k in range(self.num_stages - 1):
            self.windows.append(values[(step + k + 1) % values.shape[0]])

    def total(self):
        return sum(self.windows)


def lookahead(values):
    def body(step, acc):
        return acc + Prefetcher(step, values, num_stages=3).total()

    return jax.lax.fori_loop(0, values.shape[0], body, 0.0)
