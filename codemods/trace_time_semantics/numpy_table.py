"""The measured NumPy table of JAX402 (numpy-on-traced-value): which NumPy functions raise on a
tracer, and which `jax.numpy` function replaces each.

Data, apart from the rule, because `scripts/measure_numpy_on_tracers.py` imports it to re-measure
the table for the installed jax and NumPy.
"""

from __future__ import annotations

from jaxfix.analysis.static_values import NUMPY_DELEGATING

# Measured with jax 0.10.2 / numpy 2.4 on CPU (float32 inputs, under `jax.jit`): these NumPy
# functions raise on a tracer (`TracerArrayConversionError`; `np.argsort` a `TypeError`), and the
# `jax.numpy` function of the same name returned the same values and dtype as NumPy on the same
# concrete input.
NP_SAME = frozenset(
    """sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh exp exp2 expm1 log
    log1p log2 log10 sqrt cbrt square abs absolute fabs sign floor ceil rint trunc maximum minimum fmax fmin
    add subtract multiply divide true_divide floor_divide power mod remainder fmod negative positive reciprocal
    isnan isinf isfinite signbit copysign logical_and logical_or logical_not logical_xor greater greater_equal
    less less_equal equal not_equal asarray array concatenate stack hstack vstack dot outer inner tensordot
    einsum tile diag diagonal tril triu sort roll hypot zeros_like ones_like full_like nan_to_num heaviside sinc
    deg2rad rad2deg degrees radians clip ptp nansum nanmean median percentile quantile atleast_1d atleast_2d
    expand_dims ravel isclose allclose cross trace kron convolve diff broadcast_to select piecewise conj angle
    logaddexp logaddexp2 modf divmod average copy linalg.norm where""".split()  # where: the 3-argument form
)
# Raise on a tracer; `jax.numpy` has the name but a known difference (the fix is unsafe).
NP_DIFFERENT = {
    "argsort": "ties may come out in a different order (jax.numpy's sort is stable), and the indices are int32",
    "count_nonzero": "the count is int32, not int64",
    "float_power": "NumPy computes in float64, jax.numpy in float32 unless jax_enable_x64",
    "interp": "NumPy returns float64, jax.numpy float32 unless jax_enable_x64",
    "cov": "NumPy computes in float64, jax.numpy in float32 unless jax_enable_x64",
    "corrcoef": "NumPy computes in float64, jax.numpy in float32 unless jax_enable_x64",
    "bitwise_and": "int64 results become int32 unless jax_enable_x64",
    "left_shift": "int64 results become int32 unless jax_enable_x64",
    "empty_like": "NumPy leaves the values uninitialised, jax.numpy fills zeros",
    "take": "an out-of-bounds index raises in NumPy and is filled in jax.numpy (`mode=`)",
}
# Raise on a tracer, and no drop-in exists: the output shape depends on the data, or jax.numpy has no such name.
NP_MANUAL = {
    "unique": "the output shape depends on the data: `jnp.unique(x, size=n, fill_value=...)` with a static `n`",
    "nonzero": "the output shape depends on the data: `jnp.nonzero(x, size=n)` with a static `n`",
    "argwhere": "the output shape depends on the data: `jnp.argwhere(x, size=n)` with a static `n`",
    "flatnonzero": "the output shape depends on the data: `jnp.flatnonzero(x, size=n)` with a static `n`",
    "bincount": "the output shape depends on the data: `jnp.bincount(x, length=n)` with a static `n`",
    "histogram": "jax.numpy's histogram differs (float counts, bin edges): check `jnp.histogram` by hand",
    "ascontiguousarray": "jax arrays have no memory layout: use `jnp.asarray`",
}
# Measured to work on a tracer: never flagged. Those that call the array's own method return a
# tracer (the analysis's one table, `static_values.NUMPY_DELEGATING`); `np.array_equal` returns a
# Python bool.
NP_WORKS = NUMPY_DELEGATING | {"array_equal"}



def raises_on_tracer(name: str) -> bool:
    """Is `numpy.<name>` measured to raise on a tracer (and so reported by JAX402)?"""
    return name not in NP_WORKS and (name in NP_SAME or name in NP_DIFFERENT or name in NP_MANUAL)
