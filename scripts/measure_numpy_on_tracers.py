"""Re-measure the NumPy table of JAX402 (codemods/trace_time_semantics/numpy_table.py).

For each NumPy function the rule knows: does it raise on a tracer under `jax.jit`, and does the
`jax.numpy` function of the same name give the same values and dtype as NumPy on the same
concrete float32 input? Prints one line per function and exits 1 when the rule's table
disagrees with this jax/numpy.

    PYTHONPATH=. python scripts/measure_numpy_on_tracers.py
"""

from __future__ import annotations

import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from codemods.trace_time_semantics.numpy_table import (
    NP_DIFFERENT,
    NP_MANUAL,
    NP_SAME,
    NP_WORKS,
)

warnings.simplefilter("ignore")
TWO = set(
    "arctan2 maximum minimum fmax fmin add subtract multiply divide true_divide floor_divide power mod remainder "
    "fmod logical_and logical_or logical_xor greater greater_equal less less_equal equal not_equal outer inner "
    "hypot heaviside copysign isclose allclose array_equal kron logaddexp logaddexp2 divmod float_power cross".split()
)
CALLS = {
    "where": lambda f, a: f(a > 0.2, a, 0.0),
    "dot": lambda f, a: f(a, a.T),
    "concatenate": lambda f, a: f([a, a]),
    "stack": lambda f, a: f([a, a]),
    "hstack": lambda f, a: f([a, a]),
    "vstack": lambda f, a: f([a, a]),
    "einsum": lambda f, a: f("ij->i", a),
    "tensordot": lambda f, a: f(a, a, 2),
    "tile": lambda f, a: f(a, 2),
    "roll": lambda f, a: f(a, 1),
    "full_like": lambda f, a: f(a, 2.0),
    "clip": lambda f, a: f(a, 0.2, 0.4),
    "reshape": lambda f, a: f(a, (3, 2)),
    "swapaxes": lambda f, a: f(a, 0, 1),
    "moveaxis": lambda f, a: f(a, 0, 1),
    "repeat": lambda f, a: f(a, 2),
    "percentile": lambda f, a: f(a, 50),
    "quantile": lambda f, a: f(a, 0.5),
    "expand_dims": lambda f, a: f(a, 0),
    "convolve": lambda f, a: f(a.ravel(), a.ravel()),
    "interp": lambda f, a: f(a.ravel(), a.ravel(), a.ravel()),
    "bincount": lambda f, a: f(a.ravel().astype(int)),
    "searchsorted": lambda f, a: f(a.ravel(), 0.3),
    "broadcast_to": lambda f, a: f(a, (2, 2, 3)),
    "take": lambda f, a: f(a, 0),
    "take_along_axis": lambda f, a: f(a, (a * 0).astype(int), 1),
    "select": lambda f, a: f([a > 0.2], [a]),
    "piecewise": lambda f, a: f(a, [a > 0.2], [1.0, 0.0]),
    "bitwise_and": lambda f, a: f(a.astype(int), a.astype(int)),
    "left_shift": lambda f, a: f(a.astype(int), a.astype(int)),
    "diag": lambda f, a: f(a.ravel()),
}


def call(module, name: str, a):
    fn = module
    for part in name.split("."):
        fn = getattr(fn, part)
    if name in CALLS:
        return CALLS[name](fn, a)
    return fn(a, a) if name in TWO else fn(a)


def main() -> int:
    x = (np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)) / 10
    names = sorted(NP_SAME | set(NP_DIFFERENT) | set(NP_MANUAL) | NP_WORKS)
    wrong = []
    for name in names:
        try:
            jax.jit(lambda a: call(np, name, a))(jnp.asarray(x))
            traced = "works"
        except Exception as error:  # noqa: BLE001 - the kind of failure is the measurement
            traced = type(error).__name__
        same = ""
        if traced != "works" and name not in NP_MANUAL and hasattr(jnp, name.split(".")[0]):
            ref = jax.tree.leaves(call(np, name, x))
            try:
                got = jax.tree.leaves(jax.jit(lambda a: call(jnp, name, a))(jnp.asarray(x)))
                equal = len(ref) == len(got) and all(
                    np.shape(r) == np.shape(g)
                    and np.allclose(np.asarray(r, float), np.asarray(g, float), equal_nan=True)
                    and np.asarray(r).dtype == np.asarray(g).dtype
                    for r, g in zip(ref, got)
                )
                same = "jnp same" if equal else "jnp differs"
            except Exception as error:  # noqa: BLE001
                same = f"jnp raises {type(error).__name__}"
        table = "works" if name in NP_WORKS else "same" if name in NP_SAME else "different" if name in NP_DIFFERENT else "manual"
        agrees = (table == "works") == (traced == "works") and (table != "same" or same == "jnp same" or name == "empty_like")
        if not agrees:
            wrong.append(name)
        print(f"{name:18} on tracer: {traced:28} {same:22} table: {table}{'' if agrees else '   <-- disagrees'}")
    print(f"{len(names)} functions; {len(wrong)} disagree with the table: {', '.join(wrong)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
