"""Measurements a verification child takes beside the compared outputs, for readable evidence.

- `lines_run`: the lines of the user's file an eager run executed (which arm of each `if` an input
  took; `branches` maps them onto the source);
- `error_under_jit`: the error class the original raises when run under jit (the reason a
  control-flow fix exists), or None when it runs;
- `caching_counts`: how often a property's body computes its value: over 10 eager reads of one
  instance, inside a jitted caller (operations in the traced program), and, when the rewrite added
  `with_caches()`, after filling the cache.
- `describe_call`: inputs as a user writes them: `f32[3]`, `int 5`, `Poly(a=f32[3])`.

Runs in the child only (imports jax lazily).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any

from jaxfix.verify.protocol import ArrayArg, Call

READS = 10
SHORT_DTYPES = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "complex64": "c64", "complex128": "c128", "bool": "bool",
}


# -- inputs as text -------------------------------------------------------------------------------


def _array_text(dtype: Any, shape: tuple, prefix: str = "") -> str:
    name = SHORT_DTYPES.get(str(dtype), str(dtype))
    return f"{prefix}{name}[{','.join(map(str, shape))}]"


def describe_value(value: Any, depth: int = 0) -> str:
    """`f32[3]`, `int 5`, `float 1.5`, `Config(lr=float 0.1)` (or `Config(...)` when long)."""
    if isinstance(value, ArrayArg):
        return _array_text(value.value.dtype, value.value.shape, "" if value.jax else "np.")
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float | complex):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 24 else text[:21] + "...'"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None:
        module = type(value).__module__ or ""
        return _array_text(dtype, shape, "np." if module.startswith("numpy") else "")
    if isinstance(value, list | tuple) and type(value) in (list, tuple):
        inner = ", ".join(describe_value(v, depth + 1) for v in value[:4]) + (", ..." if len(value) > 4 else "")
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        inner = ", ".join(f"{k!r}: {describe_value(v, depth + 1)}" for k, v in list(value.items())[:4])
        return "{" + inner + (", ..." if len(value) > 4 else "") + "}"
    name = type(value).__name__
    if depth < 2 and dataclasses.is_dataclass(value):
        fields = [f.name for f in dataclasses.fields(value) if not f.name.startswith("_")]
        inner = ", ".join(f"{f}={describe_value(getattr(value, f, None), depth + 1)}" for f in fields)
        if len(inner) <= 60:
            return f"{name}({inner})"
    return f"{name}(...)"


def describe_call(c: Call) -> str:
    parts = [describe_value(a) for a in c.args] + [f"{k}={describe_value(v)}" for k, v in c.kwargs.items()]
    return f"({', '.join(parts)})"


# -- lines an eager run executed ------------------------------------------------------------------


@contextlib.contextmanager
def lines_run(filename: str, into: collections.Counter) -> Iterator[None]:
    """Count in `into` each execution of a line of `filename` inside the block (sys.settrace)."""

    def local(frame, event, arg):
        if event == "line":
            into[frame.f_lineno] += 1
        return local

    def on_call(frame, event, arg):
        if frame.f_code.co_filename == filename:
            return local
        return None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(previous)


# -- the original under jit -----------------------------------------------------------------------


def run_under_jit(target: Callable[..., Any], invoke: Callable[[tuple, dict], Any], args: tuple, kwargs: dict) -> Any:
    """Call under jit: a jit-wrapped target as it is; anything else wrapped, its jax arrays traced."""
    import jax

    if hasattr(target, "lower") and hasattr(target, "trace"):
        return invoke(args, kwargs)
    leaves, treedef = jax.tree.flatten((args, kwargs))
    traced = [i for i, leaf in enumerate(leaves) if isinstance(leaf, jax.Array)]

    def inner(*values: Any) -> Any:
        filled = list(leaves)
        for i, v in zip(traced, values):
            filled[i] = v
        a, k = jax.tree.unflatten(treedef, filled)
        return invoke(a, k)

    return jax.jit(inner)(*[leaves[i] for i in traced])


def error_under_jit(target: Callable[..., Any], invoke: Callable[[tuple, dict], Any], args: tuple, kwargs: dict) -> str | None:
    """The class name of what the call raises under jit (jit switched back on), or None."""
    import jax

    with jax.disable_jit(False):
        try:
            jax.block_until_ready(run_under_jit(target, invoke, args, kwargs))
        except Exception as exc:  # noqa: BLE001 - any failure is the answer
            return type(exc).__name__
    return None


# -- how often a property computes ----------------------------------------------------------------


def _stored(instance: Any, value: Any) -> bool:
    """True when the getter returned one of the instance's own attribute values (a cache read)."""
    try:
        values = list(vars(instance).values())
    except TypeError:
        values = []
    if dataclasses.is_dataclass(instance):
        values += [getattr(instance, f.name, None) for f in dataclasses.fields(instance)]
    return any(value is v for v in values if v is not None)


@contextlib.contextmanager
def _counting(klass: type, name: str, count: list[int]) -> Iterator[None]:
    attr = vars(klass)[name]
    if isinstance(attr, functools.cached_property):
        func = attr.func

        def counted(self):
            count[0] += 1
            return func(self)

        attr.func = counted
        try:
            yield
        finally:
            attr.func = func
        return
    if not isinstance(attr, property) or attr.fget is None:
        raise TypeError(f"{name} is not a property")
    fget = attr.fget

    def getter(self):
        value = fget(self)
        if not _stored(self, value):
            count[0] += 1
        return value

    setattr(klass, name, property(getter, attr.fset, attr.fdel, attr.__doc__))
    try:
        yield
    finally:
        setattr(klass, name, attr)


def _owner(instance: Any, name: str) -> type:
    for klass in type(instance).__mro__:
        if name in vars(klass):
            return klass
    raise LookupError(f"no class of {type(instance).__name__} defines {name}")


def caching_counts(instance: Any, name: str) -> dict[str, Any]:
    """Body runs of property `name` over READS eager reads, and operations it puts into a jit trace.

    Each scenario starts from a fresh copy (`tree_map` identity), so a `cached_property` starts empty.
    With a `with_caches()` method (JAX101's field fix), the same after filling the cache (the fill's
    own computation counted).
    """
    import jax

    klass = _owner(instance, name)

    def fresh() -> Any:
        return jax.tree.map(lambda x: x, instance)

    out: dict[str, Any] = {"reads": READS}
    count = [0]
    with _counting(klass, name, count):
        obj = fresh()
        for _ in range(READS):
            jax.block_until_ready(getattr(obj, name))
        out["eager_computes"] = count[0]
        out["jit_ops"] = _ops(jax.make_jaxpr(lambda o: getattr(o, name))(fresh()).jaxpr)
        fill = getattr(instance, "with_caches", None)
        if callable(fill):
            count[0] = 0
            filled = fresh().with_caches()
            for _ in range(READS):
                jax.block_until_ready(getattr(filled, name))
            out["filled_eager_computes"] = count[0]
            out["filled_jit_ops"] = _ops(jax.make_jaxpr(lambda o: getattr(o, name))(filled).jaxpr)
    return out


def _ops(jaxpr: Any) -> int:
    """Operations in a traced program, counted inside nested calls (a jitted property is one `pjit`
    whose body holds the work; a filled cache leaves that body empty)."""
    count = 0
    for eqn in jaxpr.eqns:
        inner = [getattr(v, "jaxpr", v) for v in eqn.params.values() if hasattr(v, "eqns") or hasattr(getattr(v, "jaxpr", None), "eqns")]
        count += sum(_ops(j) for j in inner) if inner else 1
    return count


def filled_reads(instance: Any, name: str) -> dict[str, Callable[[], Any]]:
    """Reads of property `name` through the path a JAX101 field fix tells users to take: after
    `with_caches()`, eagerly and under jit. A class without `with_caches()` (the original) reads
    the property as it is, so both versions give these outputs and the cached values are compared
    with what the original property computes."""
    import jax

    def filled() -> Any:
        fresh = jax.tree.map(lambda x: x, instance)
        fill = getattr(fresh, "with_caches", None)
        return fill() if callable(fill) else fresh

    return {
        "read after with_caches()": lambda: getattr(filled(), name),
        "read after with_caches(), under jit": lambda: jax.jit(lambda o: getattr(o, name))(filled()),
    }
