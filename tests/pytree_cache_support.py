"""Helpers for the pytree-cache tests: load a fixture's source as a fresh module, compare drive outputs."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pytree_cache"
_counter = itertools.count()


def load_module(source: str, stem: str = "case"):
    """Execute `source` as a new module (registered in sys.modules, as dataclasses need)."""
    name = f"_jaxfix_pytree_cache_{stem}_{next(_counter)}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    exec(compile(source, f"<{name}>", "exec"), mod.__dict__)
    return mod


def load_drive(path: Path):
    return load_module(path.read_text(), path.name.split(".")[0] + "_drive")


def is_crash(value) -> bool:
    return isinstance(value, str) and value.startswith("CRASH:")


def compare(original: dict, rewritten: dict) -> tuple[list[str], list[str]]:
    """(problems, improvements) under the drive contract (see the drive files' docstring)."""
    problems, improvements = [], []
    if set(original) != set(rewritten):
        problems.append(f"keys differ: {sorted(set(original) ^ set(rewritten))}")
    for key in sorted(set(original) & set(rewritten)):
        a, b = original[key], rewritten[key]
        if is_crash(b) and not (is_crash(a) and a == b):
            problems.append(f"{key}: rewrite crashed ({b}) where the original gave {a!r}")
            continue
        if is_crash(a):
            if key.startswith("improves:"):
                improvements.append(f"{key}: original {a}, rewrite works")
            else:
                problems.append(f"{key}: original crashed ({a}) outside an 'improves:' key")
            continue
        if isinstance(a, str) or isinstance(b, str):
            if a != b:
                problems.append(f"{key}: {a!r} != {b!r}")
            continue
        import jax

        leaves_a, tree_a = jax.tree.flatten(a)
        leaves_b, tree_b = jax.tree.flatten(b)
        if str(tree_a) != str(tree_b):
            problems.append(f"{key}: structure {tree_a} vs {tree_b}")
            continue
        for x, y in zip(map(np.asarray, leaves_a), map(np.asarray, leaves_b)):
            if x.shape != y.shape or x.dtype != y.dtype:
                problems.append(f"{key}: shape/dtype {x.shape} {x.dtype} vs {y.shape} {y.dtype}")
            elif not np.allclose(x, y, rtol=1e-6, atol=1e-6, equal_nan=True):
                problems.append(f"{key}: values differ: {x} vs {y}")
    return problems, improvements
