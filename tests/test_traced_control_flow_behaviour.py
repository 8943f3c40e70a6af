"""Behaviour of every traced-control-flow fixture: the original run eagerly vs the rewrite under jit.

In-process and fast (the verification engineer's subprocess-based check over the same
`.drive.py` files is the final word). For each positive case of `fixtures/traced_control_flow/`:
- the original `.in.py` raises under jit at least once on the driver's inputs (otherwise the
  finding would be a false alarm) unless every finding is manual;
- `drive(original)` under `jax.disable_jit()` equals `drive(rewritten)` under jit: same tree
  structure, shapes, dtypes (weak types and Python scalars normalised), values (per-dtype
  tolerance, equal NaN pattern), gradients included where the driver returns them;
- in steady state (a second `drive`), the eager original compiles `EXPECT_COMPILES[0]` and the
  rewrite `EXPECT_COMPILES[1]` times (both 0 here: every input signature was compiled once).
The quick set runs the first cases, `--long` every case.
"""

from __future__ import annotations

import collections

import jax
import jax.monitoring
import jax.numpy as jnp
import numpy as np
import pytest
from fixture_cases import discover_cases, load_as_module
from long_support import quick_and_long

CASES = [c for c in discover_cases() if c.family == "traced_control_flow" and c.positive]
_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_compiles: collections.Counter = collections.Counter()


def _listener(name, duration, **kwargs):
    if name == _COMPILE_EVENT:
        _compiles[kwargs.get("fun_name")] += 1


jax.monitoring.register_event_duration_secs_listener(_listener)


load = load_as_module


def load_driver(case):
    return load(case.driver)


def _leaf(x):
    weak = isinstance(x, (bool, int, float, complex)) or bool(getattr(x, "weak_type", False))
    return np.asarray(jnp.asarray(x)), weak


def assert_trees_equal(a, b, where="out"):
    pa, ta = jax.tree_util.tree_flatten_with_path(a)
    pb, tb = jax.tree_util.tree_flatten_with_path(b)
    keys_a = [jax.tree_util.keystr(k) for k, _ in pa]
    keys_b = [jax.tree_util.keystr(k) for k, _ in pb]
    assert keys_a == keys_b, f"{where}: tree structure differs: {keys_a} vs {keys_b}"
    for (key, xa), (_, xb) in zip(pa, pb):
        label = f"{where}{jax.tree_util.keystr(key)}"
        va, weak_a = _leaf(xa)
        vb, weak_b = _leaf(xb)
        assert va.shape == vb.shape, f"{label}: shape {va.shape} vs {vb.shape}"
        assert va.dtype == vb.dtype, f"{label}: dtype {va.dtype} vs {vb.dtype} (weak {weak_a}/{weak_b})"
        if va.dtype.kind in "biu":
            assert np.array_equal(va, vb), f"{label}: {va} vs {vb}"
        else:
            assert np.array_equal(np.isnan(va), np.isnan(vb)), f"{label}: NaN pattern {va} vs {vb}"
            assert np.allclose(va, vb, rtol=1e-5, atol=1e-6, equal_nan=True), f"{label}: {va} vs {vb}"


def _raises_under_jit(case, driver) -> bool:
    try:
        driver.drive(load(case.input))
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError,
            jax.errors.TracerArrayConversionError, TypeError, IndexError):
        return True
    return False


def _all_manual(case) -> bool:
    rows = case.findings_file.read_text().split()
    safeties = rows[2::3]
    return all(s == "manual" for s in safeties)


@pytest.mark.parametrize("case", quick_and_long(CASES, keep=3), ids=lambda c: c.id)
def test_original_fails_under_jit_and_rewrite_matches_eager_original(case):
    driver = load_driver(case)
    if not _all_manual(case):
        assert _raises_under_jit(case, driver), "the original runs under jit: the finding would be a false alarm"
    original = load(case.input)
    with jax.disable_jit():
        expected = driver.drive(original)
    rewritten = load(case.expected)
    actual = driver.drive(rewritten)
    assert_trees_equal(expected, actual)
    # the rewrite also runs eagerly to the same values (a third check, as in the design)
    with jax.disable_jit():
        assert_trees_equal(expected, driver.drive(load(case.expected)), where="eager-rewrite")
    # steady state: a second drive of the same module compiles nothing new
    expect = getattr(driver, "EXPECT_COMPILES", None)
    if expect is not None:
        _compiles.clear()
        with jax.disable_jit():
            driver.drive(original)
        assert sum(_compiles.values()) == expect[0], ("original", dict(_compiles))
        _compiles.clear()
        driver.drive(rewritten)
        assert sum(_compiles.values()) == expect[1], ("rewrite", dict(_compiles))
