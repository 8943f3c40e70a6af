"""Run generated programs: the original eagerly (`jax.disable_jit()`) and as written, and the
fixed one as written; print one JSON verdict per program. Used by test_fuzz_programs.py in a
subprocess with a timeout, so a generated program can neither hang nor pollute the test process.

    python behaviour_child.py FOLDER      (FOLDER holds orig_N.py and fixed_N.py)
"""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

INPUTS = [
    (np.array([0.3, -1.2, 2.0], np.float32), np.float32(0.5)),
    (np.array([0.0, 0.0, 0.0], np.float32), np.float32(-1.0)),
    (np.array([5.0, 0.1, -0.2], np.float32), np.float32(2.0)),
]


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def outputs(path: Path, name: str, eager: bool):
    try:
        module = load(path, name)
        results = []
        for x, y in INPUTS:
            if eager:
                with jax.disable_jit():
                    out = module.main(jnp.asarray(x), jnp.asarray(y))
            else:
                out = module.main(jnp.asarray(x), jnp.asarray(y))
            results.append([np.asarray(leaf, dtype=np.float64) for leaf in jax.tree.leaves(out)])
        return results, None
    except Exception as exc:  # noqa: BLE001 - the program's own failure is data here
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def same(a, b) -> bool:
    if len(a) != len(b):
        return False
    for xs, ys in zip(a, b):
        if len(xs) != len(ys):
            return False
        for x, y in zip(xs, ys):
            if x.shape != y.shape or not np.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True):
                return False
    return True


def main(folder: Path) -> None:
    for orig in sorted(folder.glob("orig_*.py")):
        n = orig.stem.split("_")[1]
        fixed = folder / f"fixed_{n}.py"
        try:
            reference, ref_error = outputs(orig, f"orig_eager_{n}", eager=True)
            as_written, asw_error = outputs(orig, f"orig_jit_{n}", eager=False)
            rewritten, fix_error = outputs(fixed, f"fixed_{n}", eager=False)
            if ref_error is not None:
                verdict = "original-fails-eagerly"
            elif fix_error is None:
                verdict = "same" if same(reference, rewritten) else "DIFFERENT"
            elif asw_error is None:
                verdict = "FIX-BREAKS-IT"  # ran as written, fails after the fix
            else:
                verdict = "both-fail-under-jit"
            print(json.dumps({"n": n, "verdict": verdict, "original_error": ref_error or asw_error, "fixed_error": fix_error}), flush=True)
        except Exception:  # noqa: BLE001
            print(json.dumps({"n": n, "verdict": "HARNESS-ERROR", "detail": traceback.format_exc()}), flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
