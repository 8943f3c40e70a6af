"""Wrong rewrites must be rejected, with a message that says where and how they differ.

The wrong rewrites are real files beside the self-test cases: a swapped branch, a dropped
loop-carry variable, and a cache field that steals the gradient. Crashes, hangs and import
failures of user code are contained and reported, never raised into jaxfix. The quick set
shows one wrong rewrite caught (the swapped branch); the others are long.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxfix.verify.api import verify_change

SELFTEST = Path(__file__).resolve().parent.parent / "fixtures" / "verify_selftest"

pytestmark = pytest.mark.slow


def _verify(case: str, variant: str, *, drive: bool = True, **options):
    before = SELFTEST / f"{case}.before.py"
    after = SELFTEST / f"{case}.{variant}.py"
    return verify_change(
        before.read_text(encoding="utf-8"),
        after.read_text(encoding="utf-8"),
        str(before),
        examples=str(SELFTEST / f"{case}.drive.py") if drive else None,
        reference="eager" if case == "traced_if" else None,
        device="cpu",
        **options,
    )


def test_swapped_branch_is_caught_by_the_driver_and_by_synthesized_inputs():
    result = _verify("traced_if", "wrong-swapped-branch")
    assert result.evidence.verdict == "mismatch"
    drive = result.unit("drive()").evidence
    assert drive.verdict == "mismatch"
    assert drive.data["output"] == "positive"
    assert "values differ at positive[0]" in drive.detail
    assert "expected [ 2., -4.,  7.]" in drive.detail and "got [-1. ,  2. , -3.5]" in drive.detail
    assert drive.data["max_difference"] == pytest.approx(10.5)
    # Without a driver, inputs synthesized from `x: jax.Array, t: float`: a positive t takes the
    # swapped branch, and the correctly rewritten loop in the same file is verified on its own.
    synthesized = _verify("traced_if", "wrong-swapped-branch", drive=False)
    unit = synthesized.unit("scale_or_flip")
    assert unit.source == "synthesized" and unit.evidence.verdict == "mismatch"
    assert unit.evidence.data["input"].startswith("(f32[3], float 1.5)")
    assert synthesized.unit("halvings").evidence.verdict == "verified"
    assert synthesized.evidence.verdict == "mismatch"


@pytest.mark.long
def test_dropped_carry_variable_is_caught_on_the_first_loop_trip():
    result = _verify("traced_if", "wrong-dropped-carry")
    drive = result.unit("drive()").evidence
    assert drive.verdict == "mismatch"
    assert drive.data["output"] == "one_trip" and drive.data["path"] == "one_trip[1]"
    assert "expected 1, got 0" in drive.detail
    halvings = _verify("traced_if", "wrong-dropped-carry", drive=False).unit("halvings").evidence
    assert halvings.verdict == "mismatch" and "expected 1, got 0" in halvings.detail


@pytest.mark.long
def test_cache_field_that_steals_the_gradient_is_caught():
    result = _verify("cached_norm", "wrong-cache-field")
    assert result.evidence.verdict == "mismatch"
    drive = result.unit("drive()").evidence
    assert drive.data["output"] == "grad"
    assert "expected [2., 4., 6.], got [0., 0., 0.]" in drive.detail
    # Without a driver, declared examples of the property find it through jax.grad too.
    examples = verify_change(
        (SELFTEST / "cached_norm.before.py").read_text(),
        (SELFTEST / "cached_norm.wrong-cache-field.py").read_text(),
        str(SELFTEST / "cached_norm.before.py"),
        examples=str(SELFTEST / "cached_norm.examples.py"),
        device="cpu",
    )
    unit = examples.unit("Poly.norm2").evidence
    assert unit.verdict == "mismatch", unit.detail
    assert "grad" in unit.data["output"] and unit.data["path"].endswith(".a"), unit.data
    assert "expected [2., 4., 6.]" in unit.detail and "got [0., 0., 0.]" in unit.detail


def _write(tmp_path: Path, original: str, rewritten: str) -> tuple[str, str, str]:
    path = tmp_path / "user_mod.py"
    path.write_text(original)
    return original, rewritten, str(path)


ORIGINAL = """
import jax
import jax.numpy as jnp


def f(x: jax.Array):
    return jnp.sin(x) * 2
"""


@pytest.mark.long
def test_rewrite_that_raises_is_a_mismatch_with_the_error(tmp_path):
    rewritten = ORIGINAL.replace("return jnp.sin(x) * 2", "return jnp.sin(x) @ jnp.ones((2, 2))")
    result = verify_change(*_write(tmp_path, ORIGINAL, rewritten), device="cpu")
    ev = result.unit("f").evidence
    assert ev.verdict == "mismatch"
    assert "the rewritten code raised TypeError" in ev.detail
    assert "user_mod.py (rewritten by jaxfix)" in ev.detail  # the traceback names the rewritten text


@pytest.mark.long
def test_child_that_exits_is_contained(tmp_path):
    rewritten = ORIGINAL.replace("return jnp.sin(x) * 2", "import os; os._exit(3)")
    result = verify_change(*_write(tmp_path, ORIGINAL, rewritten), device="cpu")
    ev = result.unit("f").evidence
    assert ev.verdict == "mismatch"
    assert "exited with status 3 before reporting" in ev.detail
    assert result.original.ok and not result.rewritten.ok


@pytest.mark.long
def test_hanging_rewrite_is_stopped_by_the_per_callable_limit(tmp_path):
    rewritten = ORIGINAL.replace("return jnp.sin(x) * 2", "import time; time.sleep(60)")
    result = verify_change(*_write(tmp_path, ORIGINAL, rewritten), device="cpu", timeout=2)
    ev = result.unit("f").evidence
    assert ev.verdict == "unverifiable"
    assert "timed out after 2 s" in ev.detail and "rewritten" in ev.detail


@pytest.mark.long
def test_rewritten_module_that_fails_to_import_is_a_mismatch(tmp_path):
    rewritten = ORIGINAL.replace("import jax\n", "import jax\nfrom jax import no_such_name\n").replace("* 2", "* 2.0")
    result = verify_change(*_write(tmp_path, ORIGINAL, rewritten), device="cpu")
    assert result.evidence.verdict == "mismatch"
    assert "importing the module failed: ImportError" in result.evidence.detail


@pytest.mark.long
def test_original_that_fails_to_import_makes_it_unverifiable(tmp_path):
    broken = ORIGINAL.replace("import jax\n", "import jax\nimport not_installed_anywhere\n")
    result = verify_change(*_write(tmp_path, broken, ORIGINAL.replace("* 2", "* 2.0")), device="cpu")
    assert result.evidence.verdict == "unverifiable"
    assert "the original could not run" in result.evidence.detail
    assert "ModuleNotFoundError" in result.evidence.detail


WHILE_ORIGINAL = """
import jax
import jax.numpy as jnp


def halve_until_small(x: float):
    while x > 1.0:
        x = x / 2.0
    return x * x
"""

WHILE_REWRITTEN = """
import jax
import jax.numpy as jnp
from jax import lax


def halve_until_small(x: float):
    x = lax.while_loop(lambda x: x > 1.0, lambda x: x / 2.0, x)
    return x * x
"""


@pytest.mark.long
def test_a_gradient_only_the_eager_original_has_is_noted_not_a_mismatch(tmp_path):
    """The eager original is reverse-differentiable, `lax.while_loop` is not; the original could not
    run under jit at all, so the missing gradient is said, and the values are still compared."""
    result = verify_change(*_write(tmp_path, WHILE_ORIGINAL, WHILE_REWRITTEN), reference="eager", device="cpu", gather=False)
    unit = result.unit("halve_until_small").evidence
    assert unit.verdict == "verified", unit.detail
    assert any("cannot be differentiated here" in note for note in unit.notes), unit.notes


@pytest.mark.long
def test_a_gradient_that_only_the_rewrite_lacks_is_still_a_mismatch_when_the_original_ran_as_written(tmp_path):
    result = verify_change(*_write(tmp_path, WHILE_ORIGINAL, WHILE_REWRITTEN), device="cpu", gather=False)
    assert result.unit("halve_until_small").evidence.verdict == "mismatch"
