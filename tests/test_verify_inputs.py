"""Where inputs come from (annotations, declared examples) and which callables a rewrite changed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jaxfix.model import FileResult, Finding, Fix, Safety
from jaxfix.verify.api import verify_change, verify_file_result
from jaxfix.verify.changed import callables, changed_callables, units_for_finding
from jaxfix.verify.inputs import CannotSynthesize, read_examples, synthesize
from jaxfix.verify.protocol import ArrayArg

SELFTEST = Path(__file__).resolve().parent.parent / "fixtures" / "verify_selftest"

JAXTYPED = '''
import jax
from jaxtyping import Array, Float, Int


def f(x: Float[Array, "b n"], idx: Int[Array, "n"], k: int, flag: bool = True):
    return x


class Model:
    def method(self, x: jax.Array):
        return x

    @property
    def size(self):
        return 3

    @size.setter
    def size(self, value):
        pass

    @staticmethod
    def helper(x: float):
        return x


def bare(x):
    return x
'''


def test_callables_kinds_and_params():
    found = callables(JAXTYPED)
    assert {name: info.kind for name, info in found.items()} == {
        "f": "function",
        "Model.method": "method",
        "Model.size": "property",
        "Model.helper": "staticmethod",
        "bare": "function",
    }
    assert [p.name for p in found["f"].params] == ["x", "idx", "k", "flag"]
    assert found["f"].params[0].annotation == "Float[Array, 'b n']"


def test_synthesized_from_jaxtyping_binds_named_dims_once():
    calls = synthesize(callables(JAXTYPED)["f"])
    assert 1 < len(calls) <= 8
    shapes = {(c.args[0].value.shape, c.args[1].value.shape) for c in calls}
    assert shapes == {((3, 5), (5,))}  # b=3, n=5 everywhere: no accidental square
    first = calls[0]
    assert isinstance(first.args[0], ArrayArg) and first.args[0].value.dtype == np.float32
    assert first.args[1].value.dtype == np.int32
    # every value of every parameter appears: 0, 1 and many loop trips, both flags
    assert {c.args[2] for c in calls} == {0, 1, 3}
    assert {c.args[3] for c in calls} == {True, False}
    signs = {bool((c.args[0].value > 0).all()) for c in calls} | {bool((c.args[0].value < 0).all()) for c in calls}
    assert signs == {True, False}


def test_synthesis_refuses_with_the_reason():
    with pytest.raises(CannotSynthesize, match="parameter `x` has no annotation"):
        synthesize(callables(JAXTYPED)["bare"])
    with pytest.raises(CannotSynthesize, match="needs an instance"):
        synthesize(callables(JAXTYPED)["Model.method"])
    assert [c.args for c in synthesize(callables(JAXTYPED)["Model.helper"])] == [(1.5,), (-2.0,), (0.0,), (37.5,)]


def test_changed_callables_sees_decorator_and_body_changes():
    before = (SELFTEST / "cached_norm.before.py").read_text()
    after = (SELFTEST / "cached_norm.after.py").read_text()
    changes = changed_callables(before, after)
    assert [(c.qualname, c.kind, c.status) for c in changes.callables] == [("Poly.norm2", "property", "changed")]
    assert not changes.module_level_changed and changes.classes_changed == []

    loop = changed_callables((SELFTEST / "jit_in_loop.before.py").read_text(), (SELFTEST / "jit_in_loop.after.py").read_text())
    assert [c.qualname for c in loop.callables] == ["run"]
    assert loop.module_level_changed  # the hoisted `_step_jit = jax.jit(step)`


def _finding(line: int, code: str = "JAX999") -> Finding:
    return Finding(code, "test", "x.py", line, 1, line, 2, "msg", Fix("t", Safety.SAFE, ()))


def test_fix_is_answerable_for_the_callable_around_it():
    before = (SELFTEST / "traced_if.before.py").read_text()
    after = (SELFTEST / "traced_if.after.py").read_text()
    changes = changed_callables(before, after)
    assert units_for_finding(_finding(7), changes) == ["scale_or_flip"]
    assert units_for_finding(_finding(16), changes) == ["halvings"]
    assert units_for_finding(_finding(1), changes) == ["halvings", "scale_or_flip"]  # module level: all


def test_read_examples_without_running_it():
    drive = read_examples(SELFTEST / "jit_in_loop.drive.py")
    assert drive.has_drive and not drive.has_table and drive.expect_compiles == (12, 0)
    table = read_examples(SELFTEST / "cached_norm.examples.py")
    assert table.has_table and table.covers("Poly.norm2") and not table.covers("other")


@pytest.mark.slow
@pytest.mark.long
def test_declared_examples_of_a_property_are_run_with_grad_and_tree_round_trip():
    before = SELFTEST / "cached_norm.before.py"
    result = verify_change(
        before.read_text(),
        (SELFTEST / "cached_norm.after.py").read_text(),
        str(before),
        examples=str(SELFTEST / "cached_norm.examples.py"),
        device="cpu",
    )
    unit = result.unit("Poly.norm2")
    assert unit.source == "example"
    assert unit.evidence.verdict == "verified", unit.evidence.detail
    assert unit.evidence.data["inputs"] == 2
    outputs = result.rewritten.tasks["Poly.norm2"].outputs
    assert {"example 1", "example 1 (2nd run)", "example 1 grad wrt args 0", "example 1 after tree_map",
            "example 1 under jit, as argument"} <= set(outputs)
    assert {"example 1 under jit, closed over", "example 1 eager, after the closure"} <= set(outputs)
    assert all(o.tree is not None for o in outputs.values())  # the property rewrite never fails
    # The original cached_property stored a tracer on the closed-over instance: its next eager read fails.
    leaked = result.original.tasks["Poly.norm2"].outputs["example 1 eager, after the closure"]
    assert leaked.error is not None and "Tracer" in leaked.error
    assert "not compared because the original raised" in unit.evidence.detail


@pytest.mark.slow
@pytest.mark.long
def test_no_inputs_is_unverifiable_and_says_what_to_supply(tmp_path):
    path = tmp_path / "m.py"
    original = "import jax.numpy as jnp\n\n\nclass Model:\n    def g(self, x):\n        return jnp.sin(x)\n"
    path.write_text(original)
    findings = [_finding(6)]
    result = FileResult(str(path), original, findings=findings, fixed_source=original.replace("sin", "cos"), fixes_applied=findings)
    [finding] = verify_file_result(result, device="cpu")
    ev = finding.fix.evidence
    assert ev.verdict == "unverifiable"
    assert "Model.g is a method: it needs an instance" in ev.detail
    assert "--examples FILE" in ev.detail and "--record" in ev.detail


@pytest.mark.slow
@pytest.mark.long
def test_unannotated_parameters_get_guessed_values(tmp_path):
    path = tmp_path / "m.py"
    original = (
        "import jax.numpy as jnp\n\n\ndef sign_scale(x, k):\n    if x > 0:\n        return x * k\n    return -x\n\n\n"
        "def total(xs):\n    return sum(v['w'] * 2 for v in xs)\n"
    )
    good = original.replace("    if x > 0:\n        return x * k\n    return -x\n", "    return jnp.where(x > 0, x * k, -x)\n")
    path.write_text(original)
    result = verify_change(original, good.replace("* 2 for", "* 2.0 for"), str(path), device="cpu", reference="eager")
    unit = result.unit("sign_scale")
    assert unit.source == "guessed" and unit.evidence.verdict == "verified", unit.evidence.detail
    assert "guessed input" in unit.evidence.detail
    # Every guess for `xs` fails in both versions: agreeing on errors proves nothing.
    total = result.unit("total").evidence
    assert total.verdict == "unverifiable" and "both raise" in total.detail, total.detail
    wrong = verify_change(original, good.replace("-x)", "x)"), str(path), device="cpu", reference="eager")
    assert wrong.unit("sign_scale").evidence.verdict == "mismatch"


@pytest.mark.slow
@pytest.mark.long
def test_a_guessed_int_that_makes_lax_branches_differ_in_type_is_no_mismatch(tmp_path):
    # fixtures/traced_control_flow/multi_assign: an int guess for `step` leaves the false arm's
    # `step` an int while the true arm makes it float; eagerly a Python `if` allows that, `lax.cond`
    # does not (TypeError). The original never ran under jit, so this is the guess, not the fix
    # (a false mismatch in benchmarks/verify_mutants.py on unmutated code). Swapped arms still mismatch.
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "traced_control_flow"
    original = (fixture / "multi_assign.in.py").read_text()
    good = (fixture / "multi_assign.out.py").read_text()
    path = tmp_path / "multi_assign.py"
    path.write_text(original)
    result = verify_change(original, good, str(path), device="cpu", reference="eager")
    unit = result.unit("clip_step")
    assert unit.source == "guessed" and unit.evidence.verdict == "verified", unit.evidence.detail
    swapped = good.replace("true_branch, false_branch, step)", "false_branch, true_branch, step)")
    assert swapped != good
    wrong = verify_change(original, swapped, str(path), device="cpu", reference="eager")
    assert wrong.unit("clip_step").evidence.verdict == "mismatch"


@pytest.mark.slow
@pytest.mark.long
def test_a_verified_fix_carries_the_evidence_numbers(tmp_path):
    path = tmp_path / "m.py"
    original = "import jax\nimport jax.numpy as jnp\n\n\ndef g(x: jax.Array, n: int):\n    for i in range(n):\n        x = jax.jit(lambda v: v * 2)(x)\n    return x\n"
    rewritten = original.replace("def g", "_double = jax.jit(lambda v: v * 2)\n\n\ndef g").replace("jax.jit(lambda v: v * 2)(x)", "_double(x)")
    path.write_text(original)
    findings = [_finding(7)]
    result = FileResult(str(path), original, findings=findings, fixed_source=rewritten, fixes_applied=findings)
    [finding] = verify_file_result(result, device="cpu")
    ev = finding.fix.evidence
    assert ev.verdict == "verified", ev.detail
    assert ev.data["source"] == "synthesized" and ev.data["inputs"] == 8  # 6 arrays x 3 ints, capped at 8
    before, after = ev.data["compiles"]
    assert before > 0 and after == 0, ev.detail
    assert f"{before} compiles -> 0" in ev.detail and ev.data["device"].startswith("cpu")
