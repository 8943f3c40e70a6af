# source: https://github.com/jax-ml/jax/issues/1219
# pattern: the timed region ends with res.block_until_ready() before the clock is read
# expect: no-flag
# family: cost
# strictness: strict
# run: (module-level code)
import time

from jax import jit
from jax import numpy

a = numpy.ones((1000000,)) * 3
b = numpy.ones((1000000,)) * 5
f = jit(numpy.multiply)

times = []
for _ in range(10):
    start = time.time()
    res = f(a, b)
    res.block_until_ready()
    times.append(time.time() - start)
print("Avg:", sum(times) / 10)
