"""Child of benchmarks/fix_quality.py: which values reach jitted functions as traced arguments.

    python benchmarks/fix_quality_probe.py MODULE.py DRIVE.py OUT.json

Before MODULE is imported, `jax.jit` is replaced by a wrapper that makes the real jitted function
and, on every call, flattens the arguments that are not static (`static_argnums`,
`static_argnames`, by position or by name) and records the leaves that are neither arrays nor
Python numbers (a string, a bool flag, a config object, a function...): values a fix must never
turn into traced arguments. Then `drive(module)` runs once and the records are written as JSON:
{"calls": N, "non_array": [{"function": name, "types": [type names]}, ...]}. Nothing is compared
here: behaviour is `jaxfix.verify`'s job.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import json
import sys
from pathlib import Path


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
    allowed = (jax.Array, np.ndarray, np.generic, int, float, complex, jax.core.Tracer)

    def probing_jit(fun=None, *args, **kwargs):
        if fun is None:  # jax.jit(static_argnames=...) used as a decorator factory
            return functools.partial(probing_jit, *args, **kwargs)
        jitted = real_jit(fun, *args, **kwargs)
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
            return jitted(*call_args, **call_kwargs)

        call.lower = getattr(jitted, "lower", None)
        return call

    jax.jit = probing_jit
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
    except Exception as exc:  # the verdict says whether this is the fix's doing; here it is only noted
        error = f"{type(exc).__name__}: {exc}"
    Path(out_path).write_text(json.dumps({"calls": calls[0], "non_array": records, "error": error}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
