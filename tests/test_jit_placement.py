"""jit-placement (JAX201-203): golden fixtures, behaviour and steady-state compile counts.

Every `fixtures/jit_placement/<case>.in.py` with a `.drive.py` is loaded twice in this
process, as written and as rewritten by jaxfix (from real files in a tmp dir), each as its
own module. The drive runs twice per version; a `jax.monitoring` listener counts XLA
compiles during the second run, which must equal the drive's EXPECT_COMPILES, and the
outputs of both versions must agree (a few ULP allowed: a constant turned into an
argument may differ in the last bit). The quick set runs the first cases' behaviour, `--long`
every case's.
"""

from __future__ import annotations

import collections
import itertools
from pathlib import Path

import jax
import jax.monitoring
import numpy as np
import pytest
from fixture_cases import load_as_module
from long_support import quick_and_long

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "jit_placement"
POSITIVE = sorted(p.name[: -len(".in.py")] for p in FIXTURES.glob("*.in.py"))
NEGATIVE = sorted(p.name[: -len(".ok.py")] for p in FIXTURES.glob("*.ok.py"))
_COUNTER = itertools.count()


def _config(case: str) -> Config:
    return Config(select=("JAX2",), unsafe_fixes=case.endswith("_unsafe"), preview=True)


def _findings(result) -> list[str]:
    """In the engine's order (by position), as tests/test_fixtures.py reads the same files."""
    return [f"{f.line}:{f.column} {f.code} {f.fix.safety.value if f.fix else 'none'}" for f in result.findings]


def _load(path: Path):
    return load_as_module(path)


class _Compiles:
    """Counts XLA backend compiles while active (listeners are process-wide: one at a time)."""

    def __init__(self) -> None:
        self.count = 0
        self.by_name: collections.Counter = collections.Counter()
        self.active = False

    def __call__(self, event: str, duration: float, **kwargs) -> None:
        if self.active and event == "/jax/core/compile/backend_compile_duration":
            self.count += 1
            self.by_name[kwargs.get("fun_name")] += 1


@pytest.fixture(scope="module")
def compiles():
    counter = _Compiles()
    jax.monitoring.register_event_duration_secs_listener(counter)
    yield counter
    jax.monitoring.unregister_event_duration_listener(counter)


def _steady_state(drive, module, counter: _Compiles):
    drive(module)
    counter.count = 0
    counter.by_name.clear()
    counter.active = True
    try:
        out = drive(module)
    finally:
        counter.active = False
    return out, counter.count


def _assert_close(a, b, path="out"):
    leaves_a, tree_a = jax.tree_util.tree_flatten_with_path(a)
    leaves_b, tree_b = jax.tree_util.tree_flatten_with_path(b)
    assert str(tree_a) == str(tree_b), f"{path}: tree structure differs"
    for (key, x), (_, y) in zip(leaves_a, leaves_b):
        where = path + jax.tree_util.keystr(key)
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, f"{where}: shape {x.shape} vs {y.shape}"
        if np.issubdtype(x.dtype, np.floating):
            ok = np.isclose(x, y, rtol=1e-6, atol=1e-6, equal_nan=True)
            ulps = np.abs(
                x.astype(np.float32).view(np.int32).astype(np.int64)
                - y.astype(np.float32).view(np.int32).astype(np.int64)
            )
            assert np.all(ok | (ulps <= 4)), f"{where}: {x} vs {y}"
        else:
            assert np.array_equal(x, y), f"{where}: {x} vs {y}"


@pytest.mark.parametrize("case", POSITIVE)
def test_golden_text_findings_and_idempotence(case):
    source = (FIXTURES / f"{case}.in.py").read_text()
    expected = (FIXTURES / f"{case}.out.py").read_text()
    result = analyze(source, f"{case}.py", _config(case), fix=True)
    assert result.error is None
    assert _findings(result) == (FIXTURES / f"{case}.findings.txt").read_text().splitlines()
    fixed = result.fixed_source if result.fixed_source is not None else source
    assert fixed == expected
    again = analyze(fixed, f"{case}.py", _config(case), fix=True)
    assert again.fixed_source is None or again.fixed_source == fixed
    # what is left after fixing is only what cannot be fixed automatically (manual findings)
    assert all(f.fix is not None and f.fix.safety.value == "manual" for f in again.findings)


@pytest.mark.parametrize("case", NEGATIVE)
def test_negative_has_no_findings(case):
    source = (FIXTURES / f"{case}.ok.py").read_text()
    result = analyze(source, f"{case}.py", Config(preview=True), fix=True)
    assert result.error is None
    assert _findings(result) == []
    assert result.fixed_source is None


@pytest.mark.parametrize("case", quick_and_long(POSITIVE, keep=3))
def test_behaviour_and_compile_counts(case, tmp_path, compiles):
    drive_module = _load(FIXTURES / f"{case}.drive.py")
    before_file, after_file = tmp_path / f"{case}_before.py", tmp_path / f"{case}_after.py"
    before_file.write_text((FIXTURES / f"{case}.in.py").read_text())
    after_file.write_text((FIXTURES / f"{case}.out.py").read_text())
    out_before, n_before = _steady_state(drive_module.drive, _load(before_file), compiles)
    out_after, n_after = _steady_state(drive_module.drive, _load(after_file), compiles)
    _assert_close(out_before, out_after)
    assert (n_before, n_after) == drive_module.EXPECT_COMPILES, dict(compiles.by_name)


def test_hoisted_assignment_is_the_tree_a_statement_parse_gives():
    """`plan_layout._assignment` builds `name = value` from the value parsed once per file: the
    same tree as `cst.parse_statement`, and None (the statement is parsed) for any other code."""
    import libcst as cst

    from codemods.jit_placement.plan_layout import _assignment
    from jaxfix.rulebase import RuleContext

    ctx = RuleContext("import jax\n\n\ndef f(x):\n  return x\n", "m.py")
    same = [
        "_f_jit = jax.jit(lambda y: y * 2.0 + 1.0)",
        "a = jax.jit(functools.partial(f, k=1), static_argnames=('a',))",
        "b = x, y",
        "c = (  x  )",
        "e = lambda x=1: x",
    ]
    for code in same:
        built = _assignment(ctx, code)
        assert built is not None and built.deep_equals(cst.parse_statement(code, config=ctx.module.config_for_parsing))
    assert _assignment(ctx, same[0]).body[0].value is _assignment(ctx, same[0]).body[0].value  # parsed once
    for code in ["g = yield x", "i = a = b", "j = f(  )  ", "k =  x", "d = 'a # b'", "x.y = f(x)", "l = a; m = b"]:
        assert _assignment(ctx, code) is None, code
