"""Which calls wait for a JAX value's contents on the host (a copy to the host, a conversion, a
print, `block_until_ready`), by name: stdlib-only facts, read by `host_sync` (JAX501's libcst
analysis) and by the module summaries on the stdlib AST (`async_returns`), so that a summary
does not import libcst."""

from __future__ import annotations

# Calls that wait for their argument's value (it is copied to the host or printed).
BLOCKING_CALLS = frozenset(
    {
        "jax.block_until_ready",
        "jax.device_get",
        "numpy.asarray",
        "numpy.array",
        "numpy.asanyarray",
        "float",
        "int",
        "bool",
        "complex",
        "print",
        "repr",
        "str",
        "format",
        "round",
        "list",
        "tuple",
    }
)
BLOCKING_METHODS = frozenset({"block_until_ready", "item", "tolist", "__array__"})
# any NumPy function converts a JAX argument to a host array, which waits for it (`np.argmax(logits)`
# in vision_transformer's evaluation loop), except those that only read its metadata; so do
# matplotlib's and pandas' (`plt.plot(samples[:, i])` in a `%%time` cell, jeremiecoullon/SGMCMCJax)
# SciPy converts its array arguments with `np.asarray` and calls the functions it is given on the
# host, converting what they return (`integrate.solve_ivp(jitted_rhs, ..., t_eval=ts)`,
# `optimize.root`/`minimize`): a JAX value handed to it is read (CosmoStat/jax-lensing@81da742
# papers/Remy2021/Gaussian-ODE.ipynb cell 18, heldout22 wrong)
BLOCKING_PREFIXES = ("numpy.", "matplotlib.", "pandas.", "scipy.")
NUMPY_METADATA = frozenset(
    {"numpy.shape", "numpy.ndim", "numpy.size", "numpy.result_type", "numpy.dtype", "numpy.iinfo", "numpy.finfo"}
)


def waits_by_name(qualname: str | None) -> bool:
    """`qualname` (a call's qualified name) waits for its arguments' values."""
    q = qualname or ""
    return q in BLOCKING_CALLS or (q.startswith(BLOCKING_PREFIXES) and q not in NUMPY_METADATA)
