"""The JAX transforms the analyses know, by qualified name: one table for the libcst analysis
(`jit_contexts`), the stdlib screens and the project call graph (`callgraph`), which must agree
on what traces a function. Plain data: importing it costs nothing (no libcst)."""

from __future__ import annotations

# Transforms that compile the function they are given (each call of a new object compiles).
JIT_NAMES = frozenset({"jax.jit", "jax.pmap", "equinox.filter_jit", "jax.experimental.pjit.pjit"})
VMAP_NAMES = frozenset({"jax.vmap", "equinox.filter_vmap", "jax.pmap"})
GRAD_NAMES = frozenset(
    {
        "jax.grad",
        "jax.value_and_grad",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.hessian",
        "jax.jvp",
        "jax.vjp",
        "jax.linearize",
        "equinox.filter_grad",
        "equinox.filter_value_and_grad",
    }
)
# Transforms that keep the function traceable without themselves tracing it abstractly.
PASS_THROUGH = GRAD_NAMES | frozenset({"jax.checkpoint", "jax.remat", "equinox.filter_checkpoint"})
# Those of them that return a new function (`jvp`, `vjp`, `linearize` call theirs at once).
FUNCTION_WRAPPERS = PASS_THROUGH - {"jax.jvp", "jax.vjp", "jax.linearize"}
PARTIAL_NAMES = frozenset({"functools.partial"})
# Options of a transform whose literal values name the arguments it passes through as Python values
# (hashed into the cache key, never traced): `static_argnums`/`static_argnames` of jit, pjit and
# filter_jit, and pmap's `static_broadcasted_argnums`.
STATIC_ARGNUMS_OPTIONS = frozenset({"static_argnums", "static_broadcasted_argnums"})
STATIC_ARGNAMES_OPTIONS = frozenset({"static_argnames"})
# lax bodies: qualified name -> positions of the function arguments (-1: a list of them)
LAX_BODIES: dict[str, tuple[int, ...]] = {
    "jax.lax.scan": (0,),
    "jax.lax.fori_loop": (2,),
    "jax.lax.while_loop": (0, 1),
    "jax.lax.cond": (1, 2),
    "jax.lax.switch": (-1,),
    "jax.lax.map": (0,),
    "jax.lax.associative_scan": (0,),
}
# Calls whose function argument runs on concrete values on the host, never on tracers, even when
# the call itself sits in traced code: qualified name -> positions of the function arguments.
# Code inside such a callback is never reported as traced.
HOST_CALLBACKS: dict[str, tuple[int, ...]] = {
    "jax.pure_callback": (0,),
    "jax.experimental.io_callback": (0,),
    "jax.experimental.io_callback.io_callback": (0,),
    "jax.debug.callback": (0,),
    "jax.experimental.host_callback.call": (0,),
    "jax.experimental.host_callback.id_tap": (0,),
}
# How many arguments a lax body is called with: a number, or "operands" for the operands the call
# passes after its functions (`lax.cond(pred, t, f, *operands)`, `lax.switch(i, branches, *operands)`).
# A body's parameter past those keeps its default: a Python value (`def branch(x, n=3)`).
LAX_BODY_ARITY: dict[str, int | str] = {
    "jax.lax.scan": 2,
    "jax.lax.fori_loop": 2,
    "jax.lax.while_loop": 1,
    "jax.lax.cond": "operands",
    "jax.lax.switch": "operands",
    "jax.lax.map": 1,
    "jax.lax.associative_scan": 2,
}


def lax_body_arity(qual: str, positional: int, plain: bool) -> int | None:
    """How many arguments a body of the lax call `qual` gets, from the call's count of positional
    arguments (`plain`: no `*args` and no keywords); None when not known."""
    arity = LAX_BODY_ARITY.get(qual)
    if isinstance(arity, int) or arity is None:
        return arity
    first = {"jax.lax.cond": 3, "jax.lax.switch": 2}.get(qual)
    return None if first is None or not plain else max(positional - first, 0)


# Methods a construction `Cls(...)` runs (dataclass and equinox validation hooks included).
CONSTRUCTION_HOOKS = ("__init__", "__post_init__", "__check_init__")

# Attributes that hold a function stored once on their object, not a method: flax's TrainState
# keeps `apply_fn=model.apply` as a field (`TrainState.create(apply_fn=...)`, kept by
# `apply_gradients`), so `state.apply_fn` is the same function object on every read
FUNCTION_FIELDS = frozenset({"apply_fn"})

# Calls that return a container of plain functions (haiku's `Transformed(init, apply)`): `net.apply`
# is the same function object on every read, not a fresh bound method
FUNCTION_CONTAINERS = frozenset(
    {
        "haiku.transform",
        "haiku.transform_with_state",
        "haiku.without_apply_rng",
        "haiku.multi_transform",
        "haiku.multi_transform_with_state",
        "haiku.without_state",
    }
)
