"""The transforms the jit-placement rules know, by what they do to a callable, and the words a
site's kind is named with: one table for the site finder (`sites`), the screen, the planner and
the fixes. The qualified names come from `jaxfix.analysis.transforms`."""

from __future__ import annotations

from jaxfix.analysis.jit_contexts import BODY_ARGS, GRAD_NAMES, PARTIAL_NAMES
from jaxfix.analysis.transforms import JIT_NAMES

# Transforms that compile (a fresh callable means a fresh cache key and an XLA compile), with the
# kind the planner fixes them as: `nnx.jit` and pjit take `static_argnames` like `jax.jit`;
# `jax_dataclasses.jit` marks statics by annotation, so captured static values are hoisted by hand.
COMPILING = {
    "jax.jit": "jit",
    "jax.pmap": "pmap",
    "jax.experimental.pjit.pjit": "jit",
    "equinox.filter_jit": "filter_jit",
    "equinox.filter_pmap": "filter_pmap",
    "flax.nnx.jit": "jit",
    "flax.nnx.pmap": "pmap",
    "jax_dataclasses.jit": "jdc_jit",
}
assert set(COMPILING) == JIT_NAMES, "the compiling transforms are the table's (jaxfix.analysis.transforms)"
# Transforms that only wrap: eagerly they retrace on every call whether hoisted or not (measured:
# 0 compiles per run for a fresh vmap/grad/value_and_grad/checkpoint lambda in a loop), so they
# matter only under a compiling transform, e.g. `jax.jit(jax.grad(lambda p: ...))`.
WRAPPING = {
    "jax.vmap": "vmap",
    "jax.grad": "grad",
    "jax.value_and_grad": "value_and_grad",
    "jax.jacfwd": "jacfwd",
    "jax.jacrev": "jacrev",
    "jax.hessian": "hessian",
    "jax.checkpoint": "checkpoint",
    "jax.remat": "remat",
    "equinox.filter_grad": "filter_grad",
    "equinox.filter_value_and_grad": "filter_value_and_grad",
    "equinox.filter_vmap": "filter_vmap",
    "flax.nnx.vmap": "vmap",
    "flax.nnx.grad": "grad",
    "flax.nnx.value_and_grad": "value_and_grad",
    "flax.nnx.remat": "remat",
}
# Wrappers that return a new function object on every call, so that `jax.jit(jax.grad(f))` is a
# new cache key each time even for a module function `f` (measured: 3 compiles in 3 calls for
# grad, vmap, jacrev, value_and_grad, hessian, checkpoint). equinox's `filter_grad`,
# `filter_value_and_grad` and `filter_vmap` return modules that compare equal for the same
# function (1 compile).
NEW_FUNCTION_WRAPPERS = frozenset(
    {"vmap", "grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "checkpoint", "remat"}
)
TRANSFORMS = {**COMPILING, **WRAPPING}
# Calls whose function argument runs under a trace: code inside such a function is traced once
# per compile of the caller, so a transform there is inlined and never compiles on its own.
TRACING_CALLS = frozenset(
    {*TRANSFORMS, *GRAD_NAMES, *BODY_ARGS, "jax.custom_jvp", "jax.custom_vjp", "jax.eval_shape", "jax.make_jaxpr"}
)
PARTIALS = PARTIAL_NAMES
# Decorators that bound how often one function object may be traced: a def carrying one is a
# harness that compiles each new object on purpose (a benchmark or test timing one closure).
TRACE_BUDGETS = frozenset({"equinox.debug.assert_max_traces", "chex.assert_max_traces"})
NEW_OBJECT = "bound method of a new object"  # `M(args).method`: a new object, hence a new cache key
FRESH = ("lambda", "partial", "nested def", "decorated nested def", "bound method", NEW_OBJECT, "local callable")
MODULE_FUNCTION = "module function"  # the same function every time: re-wrapping it is a cache hit
# Transforms whose cache is keyed on the function by equality, so that a bound method of the same
# object (`jax.pmap(self._buffer.insert)`, `eqx.filter_jit(model.step)`) hits it, unlike `jax.jit`
# (measured, jax 0.10 on CPU: pmap 1 compile in 4 calls, filter_jit 1 in 3, jit 4 in 4; an
# `eqx.Module`'s bound method under `filter_jit` is a pytree: 1 compile for 3 new instances).
CACHES_BOUND_METHODS = frozenset({"pmap", "filter_jit", "filter_pmap"})

