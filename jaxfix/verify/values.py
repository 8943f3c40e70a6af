"""Values as a verification child handles them: outputs flattened for the parent, recorded
arguments restored (NumPy data back to jax arrays, user classes rebuilt, fields a fix added filled
with their defaults), errors as outcomes, and the small tests the child asks of a value.

Runs in the child only (imports jax lazily).
"""

from __future__ import annotations

import traceback
from typing import Any

from jaxfix.verify.compare import FlatTree, Outcome, flatten
from jaxfix.verify.protocol import ArrayArg, Construct


def _error_outcome(exc: BaseException, user_files: set[str]) -> Outcome:
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if f.filename in user_files] or frames[-3:]
    trace = "".join(traceback.format_list(mine[-3:]))
    message = str(exc).strip().splitlines()
    first = message[0][:300] if message else ""
    name = type(exc).__name__
    return Outcome(error=f"{name}: {first}" if first else name, error_type=f"{type(exc).__module__}.{type(exc).__qualname__}", trace=trace)


def _tree(value: Any) -> FlatTree:
    return flatten(value)


def _restore(tree: Any) -> Any:
    """ArrayArg leaves -> jax arrays on the default device (weak type kept where possible);
    Construct leaves -> the objects they describe, built from restored arguments."""
    import jax
    import jax.numpy as jnp

    def one(leaf: Any) -> Any:
        if isinstance(leaf, Construct):
            return leaf.build(_restore)
        if not isinstance(leaf, ArrayArg):
            return leaf
        if not leaf.jax:
            return leaf.value
        array = jnp.asarray(leaf.value)
        if leaf.weak_type:
            try:  # no public API makes a weak-typed array from data
                from jax._src.lax import lax as lax_internal

                array = lax_internal._convert_element_type(array, array.dtype, weak_type=True)
            except Exception:
                pass
        return array

    return jax.tree.map(one, tree, is_leaf=lambda x: isinstance(x, ArrayArg))


def _fill_added_defaults(value: Any, seen: set[int]) -> None:
    """Give recorded dataclass instances (flax structs, eqx.Modules, dataclasses) the defaults of
    fields their class has but the recording lacks.

    An instance recorded from the original is unpickled into the rewritten module's class, which
    may have gained a field (JAX101's cache field): unpickling restores only the recorded
    attributes, so without its default the new field reads as the class's sentinel.
    """
    import dataclasses

    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, (list, tuple)):
        for item in value:
            _fill_added_defaults(item, seen)
    elif isinstance(value, dict):
        for item in value.values():
            _fill_added_defaults(item, seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        state = getattr(value, "__dict__", None)
        for spec in dataclasses.fields(value):
            present, held = _recorded_field(value, state, spec.name)
            if present:
                _fill_added_defaults(held, seen)
            elif spec.default is not dataclasses.MISSING:
                object.__setattr__(value, spec.name, spec.default)
            elif spec.default_factory is not dataclasses.MISSING:
                object.__setattr__(value, spec.name, spec.default_factory())


def _recorded_field(value: Any, state: dict | None, name: str) -> tuple[bool, Any]:
    """Whether the unpickled instance holds field `name`, and its value: from its `__dict__`
    (a class attribute of the same name is only a default), or, for a slotted class, its slot."""
    if state is not None:
        return (True, state[name]) if name in state else (False, None)
    try:
        return True, object.__getattribute__(value, name)
    except AttributeError:
        return False, None


def _holds_tracer(value: Any) -> bool:
    """Whether an output was computed inside a trace (a call from another jitted function)."""
    import jax

    try:
        return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(value))
    except Exception:  # noqa: BLE001 - an output jax cannot flatten holds no tracer we can see
        return False


def donated(value: Any) -> bool:
    """Whether a call deleted an array of `value`: a jit with `donate_argnums` (or
    `eqx.filter_jit(donate="all")`) frees its arguments' buffers, so the next run on the same
    inputs would raise in both versions and compare nothing."""
    import jax

    try:
        leaves = jax.tree.leaves(value)
    except Exception:  # noqa: BLE001 - a value jax cannot flatten holds no array we can see
        return False
    return any(isinstance(leaf, jax.Array) and leaf.is_deleted() for leaf in leaves)


def copy_arrays(value: Any) -> Any:
    """`value` with every JAX array copied (same device): a spare of the inputs that a donating
    call cannot delete. Other leaves are shared; pytree nodes are rebuilt."""
    import jax
    import jax.numpy as jnp

    return jax.tree.map(lambda leaf: jnp.copy(leaf) if isinstance(leaf, jax.Array) else leaf, value)


def _block(value: Any) -> Any:
    """Wait for asynchronous dispatch so timings measure the computation."""
    try:
        import jax

        jax.block_until_ready(value)
    except Exception:
        pass
    return value


def _float_scalar(tree: FlatTree) -> bool:
    if len(tree.leaves) != 1 or tree.paths != ("",):
        return False
    value = tree.leaves[0].value
    if isinstance(value, float):
        return True
    return getattr(value, "shape", None) == () and getattr(getattr(value, "dtype", None), "kind", "") == "f"


def _differentiable(arg: Any) -> bool:
    import jax
    import numpy as np

    leaves = jax.tree.leaves(arg)
    if not leaves:
        return False
    for leaf in leaves:
        if isinstance(leaf, float):
            continue
        dtype = getattr(leaf, "dtype", None)
        if not isinstance(leaf, jax.Array) or dtype is None or not np.issubdtype(dtype, np.inexact):
            return False
    return True
