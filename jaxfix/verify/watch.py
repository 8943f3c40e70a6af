"""What a call does besides returning values, watched in the child for the families that promise it.

- `printed`: the text a call prints (the eager original's `print`, the rewrite's `jax.debug.print`,
  waited for with `jax.effects_barrier()`), compared as an output: a JAX401 rewrite promises the
  same lines. Lines are compared as a sorted list: `jax.debug.print` calls without `ordered=True`
  may come out in any order, and the fix orders them only where a function prints several times.
- `numpy_backed`: the eager reference of an in-place update (`x[i] = v`, JAX403) cannot run on
  JAX arrays even eagerly (they are immutable); the code means NumPy's semantics, so the original
  runs on writable NumPy copies of its array arguments, and the module's `jax.numpy` returns NumPy
  arrays too (`out = jnp.zeros(n); out[i] = v`).
- `Clocks`: the clock reads and waits (`block_until_ready`) of a call, in order. A JAX501 rewrite
  promises that the timed region includes the computation: a clock read that ends a region comes
  after a wait. While a call is watched the clocks return a counter (one tick per read), so an
  elapsed time a function returns is the same number in both versions and is compared like any
  other value instead of differing run to run.

Runs in the child only (imports jax lazily).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

PRINTED = "printed"  # Job.watch: compare printed output
TIMING = "timing"  # Job.watch: order clock reads and waits; deterministic clocks
MUTABLE = "numpy-arrays"  # Job.watch: the eager reference runs on writable NumPy arrays
CLOCKS = ("perf_counter", "time", "monotonic", "process_time")


@contextlib.contextmanager
def printed(into: list[str]) -> Iterator[None]:
    """Collect the lines printed to stdout inside the block (host callbacks included)."""
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            try:
                yield
            finally:
                try:
                    import jax

                    jax.effects_barrier()  # jax.debug.print runs on a runtime thread
                except Exception:  # noqa: BLE001 - nothing pending, or no effects to wait for
                    pass
    finally:
        into.extend(buffer.getvalue().splitlines())


def printed_text(lines: list[str]) -> str:
    return "\n".join(sorted(lines))


def to_numpy(tree: Any) -> Any:
    """Writable NumPy copies of the concrete JAX arrays in `tree` (tracers and the rest kept)."""
    import jax
    import numpy as np

    def one(leaf: Any) -> Any:
        if isinstance(leaf, jax.Array) and not isinstance(leaf, jax.core.Tracer):
            if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
                return leaf
            return np.array(leaf)
        return leaf

    return jax.tree.map(one, tree)


def numpy_backed(module: Any) -> None:
    """Rebind the module's names for `jax.numpy` to a view whose functions return NumPy arrays."""
    import types

    import jax.numpy as jnp

    class NumpyBacked(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            value = getattr(jnp, name)
            if callable(value) and not isinstance(value, type) and not isinstance(value, types.ModuleType):

                def call(*args: Any, **kwargs: Any) -> Any:
                    return to_numpy(value(*args, **kwargs))

                return call
            return value

    view = NumpyBacked("jax.numpy")
    for name, value in list(vars(module).items()):
        if value is jnp:
            setattr(module, name, view)


def _in_jax(filename: str) -> bool:
    return f"{os.sep}jax{os.sep}" in filename or f"{os.sep}jaxlib{os.sep}" in filename


class Clocks:
    """Patches the `time` module's clocks and jax's waits once; records only inside `watching()`."""

    def __init__(self, user_files: set[str] | None = None) -> None:
        self.events: list[str] | None = None
        self.tick = 0.0
        self._installed = False
        # waits count where the user's code makes them; clock reads tick anywhere but inside jax
        # (which reads the clock while it compiles), so `timeit` in the user's code ticks too
        self.user_files = user_files

    def install(self) -> None:
        if self._installed:
            return
        self._installed = True
        for name in CLOCKS:
            real = getattr(time, name)
            setattr(time, name, self._clock(real))
            ns = getattr(time, f"{name}_ns", None)
            if ns is not None:
                setattr(time, f"{name}_ns", self._clock(ns, scale=10**9))
        import jax

        real_block = jax.block_until_ready

        def block_until_ready(x: Any) -> Any:
            if self.events is not None and self._from_user():
                self.events.append("wait")
            return real_block(x)

        jax.block_until_ready = block_until_ready
        try:
            from jax._src.array import ArrayImpl
        except ImportError:  # pragma: no cover - jax moved it
            return
        method = ArrayImpl.block_until_ready

        def array_block(array: Any) -> Any:
            if self.events is not None and self._from_user():
                self.events.append("wait")
            return method(array)

        ArrayImpl.block_until_ready = array_block

    def _from_user(self) -> bool:
        return self.user_files is None or sys._getframe(2).f_code.co_filename in self.user_files

    def _clock(self, real: Any, scale: int = 1) -> Any:
        def clock() -> Any:
            if self.events is None or _in_jax(sys._getframe(1).f_code.co_filename):
                return real()
            self.events.append("clock")
            self.tick += 1.0
            return self.tick * scale if scale == 1 else int(self.tick) * scale

        clock.__name__ = getattr(real, "__name__", "clock")
        return clock

    @contextlib.contextmanager
    def watching(self, into: dict[str, int]) -> Iterator[None]:
        """Count clock reads and reads that a wait precedes (since the region's previous read)."""
        self.events, self.tick = [], 0.0
        try:
            yield
        finally:
            events, self.events = self.events, None
            reads = waited = 0
            since = False
            for event in events:
                if event == "wait":
                    since = True
                    continue
                if reads and since:
                    waited += 1
                reads += 1
                since = False
            into["reads"] = into.get("reads", 0) + reads
            into["waited"] = into.get("waited", 0) + waited


# What a rule's fix promises besides returned values: the parent sets `Job.watch` from it.
PROMISES = {"JAX401": PRINTED, "JAX501": TIMING, "JAX403": MUTABLE}


def watch_for(codes: list[str]) -> tuple[str, ...]:
    return tuple(sorted({PROMISES[c] for c in codes if c in PROMISES}))


def timing_verdict(before: dict[str, int] | None, after: dict[str, int] | None) -> str | None:
    """Why a JAX501 rewrite is ineffective: its clock reads are no more often preceded by a wait
    than the original's (the block landed after the clock read, or on another value); None when
    it improves or nothing was measured."""
    if not after or not after.get("reads"):
        return None
    old, new = (before or {}).get("waited", 0), after.get("waited", 0)
    if new > old:
        return None
    return (
        f"no clock read waits for the computation any more often: {old} of {(before or {}).get('reads', 0)} "
        f"clock reads came after a wait -> {new} of {after['reads']} (the wait is not before the clock read)"
    )


def timing_figure(pairs: list[tuple[dict | None, dict]]) -> str:
    """'the timed region now includes the computation: 2 of 4 clock reads come after a wait (original: 0)'."""
    old = sum((before or {}).get("waited", 0) for before, _ in pairs)
    new = sum(after.get("waited", 0) for _, after in pairs)
    reads = sum(after.get("reads", 0) for _, after in pairs)
    return f"the timed region now includes the computation: {new} of {reads} clock reads come after a wait (original: {old})"


# Rewrites that reorder a loop's arithmetic (a Python loop -> `fori_loop`/`while_loop`, compiled as
# one program): float results are compared with the tolerance scaled to the loop's length.
REORDERING = frozenset({"JAX302", "JAX303", "JAX502"})
MIN_REORDER_SCALE = 16
DEFAULT_REORDER_SCALE = 64  # the loop's length is unknown (the original ran under jit)


def reorder_scale(codes: list[str], lines: dict[int, int] | None) -> int:
    """1, or for a reordering rewrite the trips of the longest loop the eager original ran (the
    most any line of the file ran for this input), at least MIN_REORDER_SCALE."""
    if not REORDERING & set(codes):
        return 1
    if not lines:
        return DEFAULT_REORDER_SCALE
    return max(MIN_REORDER_SCALE, max(int(n) for n in lines.values()))
