"""What `nnx.cached_partial` saves a small-model training loop (issue #30 item 3, JAX207's evidence).

Flax's performance guide: an `@nnx.jit` step called per batch with the same `model` and
`optimizer` pays, on every call, a Python traversal of the graph objects (split, merge, update of
every Variable) before the compiled program runs. `nnx.cached_partial(train_step, model,
optimizer)` caches that traversal. For a small model the traversal is most of the step.

Measures, on the default device (CPU here), the steady-state seconds per step of both loops on
the same model sizes (after a warm-up that compiles), blocking on every step's loss, best of
`--repeats` runs, and checks both loops reach the same parameters (the cached one updates the
original model's Variables).

    python benchmarks/nnx_cached_partial.py
    python benchmarks/nnx_cached_partial.py --steps 300 --repeats 5 --widths 8,64,512
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, width: int, depth: int, rngs: nnx.Rngs) -> None:
        self.layers = nnx.List([nnx.Linear(width, width, rngs=rngs) for _ in range(depth)])
        self.out = nnx.Linear(width, 1, rngs=rngs)

    def __call__(self, x):
        for layer in self.layers:
            x = nnx.relu(layer(x))
        return self.out(x)


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def _setup(width: int, depth: int):
    model = MLP(width, depth, nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
    return model, optimizer


def _batches(width: int, steps: int):
    rng = np.random.default_rng(0)
    return [
        (jnp.asarray(rng.normal(size=(32, width)), jnp.float32), jnp.asarray(rng.normal(size=(32, 1)), jnp.float32))
        for _ in range(steps)
    ]


def _time(step, batches) -> float:
    step(*batches[0]).block_until_ready()  # compile
    start = time.perf_counter()
    for x, y in batches:
        step(x, y).block_until_ready()
    return (time.perf_counter() - start) / len(batches)


def measure(width: int, depth: int, steps: int, repeats: int) -> dict:
    batches = _batches(width, steps)
    plain_times, cached_times = [], []
    for _ in range(repeats):
        model, optimizer = _setup(width, depth)
        plain_times.append(_time(lambda x, y: train_step(model, optimizer, x, y), batches))
        plain_params = nnx.state(model, nnx.Param)
        model, optimizer = _setup(width, depth)
        cached = nnx.cached_partial(train_step, model, optimizer)
        cached_times.append(_time(cached, batches))
        cached_params = nnx.state(model, nnx.Param)
    same = all(
        np.allclose(a, b, rtol=1e-5, atol=1e-6)
        for a, b in zip(jax.tree_util.tree_leaves(plain_params), jax.tree_util.tree_leaves(cached_params))
    )
    plain, cached_s = min(plain_times), min(cached_times)
    return {"width": width, "depth": depth, "plain": plain, "cached": cached_s, "speedup": plain / cached_s, "same": same}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--widths", default="8,64,256")
    args = parser.parse_args()
    import flax

    print(
        f"jax {jax.__version__}, flax {flax.__version__}, {jax.devices()[0].platform}, "
        f"{platform.processor() or platform.machine()}; {args.steps} steps, best of {args.repeats}"
    )
    print(f"{'width':>6} {'depth':>5} {'train_step ms':>14} {'cached_partial ms':>18} {'speed-up':>9}  same params")
    for width in (int(w) for w in args.widths.split(",")):
        r = measure(width, args.depth, args.steps, args.repeats)
        print(
            f"{r['width']:>6} {r['depth']:>5} {r['plain'] * 1e3:>14.3f} {r['cached'] * 1e3:>18.3f} "
            f"{r['speedup']:>8.2f}x  {r['same']}"
        )


if __name__ == "__main__":
    main()
