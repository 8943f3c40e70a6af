"""Child of benchmarks/fix_quality.py: which values reach jitted functions as traced arguments,
and how often each `jax.jit` site of the module makes a wrapper and compiles.

    python benchmarks/fix_quality_probe.py MODULE.py DRIVE.py OUT.json

Before MODULE is imported, `jax.jit` is replaced by a wrapper that makes the real jitted function
(the same function object goes to the real `jax.jit`, so JAX's caches behave as without the probe)
and, on every call, flattens the arguments that are not static (`static_argnums`,
`static_argnames`, by position or by name) and records the leaves that are neither arrays nor
Python numbers (a string, a bool flag, a config object, a function...): values a fix must never
turn into traced arguments.

It also attributes work to the line of MODULE that called `jax.jit` (the creation site): how many
wrappers each site made and how many backend compiles ran inside calls of those wrappers (a
`jax.monitoring` listener; a call of a wrapper marks its site for the compiles under it). The
drive runs twice; the site counts are those of the second run (steady state), which is what
tells a hoist above a loop (one wrapper, one compile, per entry into the loop) from a wrapper made
per iteration (one of each per iteration).

Output JSON: {"calls": N, "non_array": [{"function": name, "types": [type names]}, ...],
"sites": {"LINE": {"creations": C, "compiles": K}}, "error": ...}. Nothing is compared here:
behaviour is `jaxfix.verify`'s job.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (int, str)):
        return (value,)
    return tuple(value)


def main(module_path: str, drive_path: str, out_path: str) -> int:
    import jax
    import numpy as np

    records: list[dict] = []
    calls = [0]
    real_jit = jax.jit
    module_file = str(Path(module_path).resolve())
    steady = [False]  # set for the second drive run
    active: list[int | None] = []  # creation lines of the wrappers being called, innermost last
    sites: dict[int, Counter] = defaultdict(Counter)

    def on_event(event: str, duration: float, **kwargs) -> None:
        # the innermost call of a wrapper made in MODULE (a library's own jitted helpers, such as
        # those `eqx.filter_jit` calls, have no site and pass the compile to it)
        site = next((line for line in reversed(active) if line is not None), None)
        if event == COMPILE_EVENT and steady[0] and site is not None:
            sites[site]["compiles"] += 1

    jax.monitoring.register_event_duration_secs_listener(on_event)

    def creation_line() -> int | None:
        """The line of MODULE that called `jax.jit` (directly or through a `partial` of it)."""
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename != module_file:
            if "functools" not in frame.f_code.co_filename:
                return None  # made inside a library (flax, optax): not a site of the module
            frame = frame.f_back
        return frame.f_lineno if frame is not None else None

    def register(site: int | None) -> int | None:
        """List a creation site; what it makes in the second run is counted."""
        if site is not None:
            sites[site]["creations"] += int(steady[0])
        return site

    def called_at(site: int | None, jitted, args: tuple, kwargs: dict):
        """Call a wrapper, its compiles counted for the site that made it."""
        active.append(site)
        try:
            return jitted(*args, **kwargs)
        finally:
            active.pop()

    allowed = (jax.Array, np.ndarray, np.generic, int, float, complex, jax.core.Tracer)

    def probing_jit(fun=None, *args, **kwargs):
        if fun is None:  # jax.jit(static_argnames=...) used as a decorator factory
            return functools.partial(probing_jit, *args, **kwargs)
        jitted = real_jit(fun, *args, **kwargs)
        site = register(creation_line())
        static_nums = set(_as_tuple(kwargs.get("static_argnums")))
        static_names = set(_as_tuple(kwargs.get("static_argnames")))
        try:
            names = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):
            names = []
        label = getattr(fun, "__name__", None) or getattr(getattr(fun, "func", None), "__name__", type(fun).__name__)

        @functools.wraps(fun)
        def call(*call_args, **call_kwargs):
            calls[0] += 1
            traced = [
                a
                for i, a in enumerate(call_args)
                if i not in static_nums and (i >= len(names) or names[i] not in static_names)
            ]
            traced += [v for k, v in call_kwargs.items() if k not in static_names]
            bad = sorted(
                {
                    type(leaf).__name__
                    for leaf in jax.tree_util.tree_leaves(traced)
                    if isinstance(leaf, bool) or not isinstance(leaf, allowed)
                }
            )
            if bad:
                records.append({"function": label, "types": bad})
            return called_at(site, jitted, call_args, call_kwargs)

        call.lower = getattr(jitted, "lower", None)
        return call

    jax.jit = probing_jit
    try:
        import equinox
    except ImportError:
        equinox = None
    if equinox is not None:
        real_filter_jit = equinox.filter_jit

        def probing_filter_jit(fun=None, **kwargs):
            """`eqx.filter_jit`: only the site counts (non-array arguments are static there)."""
            if fun is None:
                return functools.partial(probing_filter_jit, **kwargs)
            jitted = real_filter_jit(fun, **kwargs)
            site = register(creation_line())

            @functools.wraps(fun)
            def call(*call_args, **call_kwargs):
                return called_at(site, jitted, call_args, call_kwargs)

            return call

        equinox.filter_jit = probing_filter_jit
    sys.path.insert(0, str(Path(module_path).resolve().parent))
    spec = importlib.util.spec_from_file_location("_fix_quality_probed", module_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    dspec = importlib.util.spec_from_file_location("_fix_quality_drive", drive_path)
    drive = importlib.util.module_from_spec(dspec)
    dspec.loader.exec_module(drive)
    error = None
    try:
        drive.drive(module)
        steady[0] = True
        drive.drive(module)
    except Exception as exc:  # the verdict says whether this is the fix's doing; here it is only noted
        error = f"{type(exc).__name__}: {exc}"
    counts = {str(line): {"creations": c["creations"], "compiles": c["compiles"]} for line, c in sorted(sites.items())}
    Path(out_path).write_text(json.dumps({"calls": calls[0], "non_array": records, "sites": counts, "error": error}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
