# source: https://github.com/JaxGaussianProcesses/GPJax/blob/046d07a97a94b5aac67f58c8b1fa3828e2a37e40/gpjax/scan.py#L43-L110
# pattern: a scan with a progress bar: the scanned body calls `jax.debug.callback` under `lax.cond`, and the host function it calls mutates the bar (outer state) at run time, every iteration: no trace-time side effect
# expect: no-flag
# family: semantics
# strictness: strict
# run: vscan(lambda c, x: (c + x, c), 0.0, jnp.arange(20.0))
import jax
import jax.numpy as jnp
from jax import lax


def _callback(cond, func, *args):
    def _do_callback(_):
        jax.debug.callback(func, *args)
        return 0

    def _not_callback(_):
        return 0

    _ = lax.cond(cond, _do_callback, _not_callback, operand=None)


def vscan(f, init, xs, log_rate=10):
    progress = {"done": 0, "values": []}

    def _update_bar(iter_num, value):
        progress["done"] = int(iter_num) + 1
        progress["values"].append(float(value))

    def _body(carry, x):
        iter_num, x = x
        carry, y = f(carry, x)
        _callback(iter_num % log_rate == 0, _update_bar, iter_num, y)
        return carry, y

    carry, ys = lax.scan(_body, init, (jnp.arange(xs.shape[0]), xs))
    return carry, ys, progress
