"""--record: calls captured while the user's own pytest suite runs the original package."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from jaxfix.verify.api import verify_change
from jaxfix.verify.inputs import record_calls

pytestmark = [pytest.mark.slow, pytest.mark.long]

ORIGINAL = textwrap.dedent(
    '''
    import jax
    import jax.numpy as jnp


    def smooth(x, steps):
        for i in range(steps):
            x = jax.jit(lambda v: 0.5 * v + jnp.roll(v, 1) * 0.25 + i)(x)
        return x


    class Scaler:
        def __init__(self, factor):
            self.factor = factor

        def apply(self, x):
            return x * self.factor
    '''
)

HOISTED = ORIGINAL.replace(
    "def smooth(x, steps):",
    "_smooth_step = jax.jit(lambda v, i: 0.5 * v + jnp.roll(v, 1) * 0.25 + i)\n\n\ndef smooth(x, steps):",
).replace("x = jax.jit(lambda v: 0.5 * v + jnp.roll(v, 1) * 0.25 + i)(x)", "x = _smooth_step(x, i)")

WRONG = HOISTED.replace("x = _smooth_step(x, i)", "x = _smooth_step(x, 1)")

TEST = textwrap.dedent(
    '''
    import jax.numpy as jnp
    import numpy as np

    from pkg.ops import Scaler, smooth


    def test_smooth_keeps_shape():
        for steps in (0, 1, 4):
            assert smooth(jnp.arange(5.0), steps).shape == (5,)


    def test_smooth_numpy_input():
        assert smooth(np.ones(3, np.float32), 2).shape == (3,)


    def test_scaler():
        assert float(Scaler(2.0).apply(jnp.ones(2)).sum()) == 4.0
    '''
)


def project_tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops.py").write_text(ORIGINAL)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ops.py").write_text(TEST)
    return tmp_path


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return project_tree(tmp_path)


def _command() -> str:
    return f"{sys.executable} -m pytest -q -p no:cacheprovider tests"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One run of the project's pytest suite under the recorder, shared by the tests below."""
    root = project_tree(tmp_path_factory.mktemp("recorded"))
    recording = record_calls(
        _command(), path=str(root / "pkg" / "ops.py"), targets={"smooth": "function", "Scaler.apply": "method"},
        limit=3, cwd=str(root),
    )
    return root, recording


def test_recorder_captures_calls_with_dtypes_and_module_name(recorded):
    _, recording = recorded
    assert recording.returncode == 0, recording.output_tail
    assert recording.module_name == "pkg.ops"
    assert recording.count("smooth") == 3  # 4 calls made (steps 0, 1, 4, a NumPy call), limit 3
    assert recording.count("Scaler.apply") == 1
    assert recording.errors == []


def test_recorded_calls_verify_a_correct_hoist(recorded):
    root, recording = recorded
    result = verify_change(ORIGINAL, HOISTED, str(root / "pkg" / "ops.py"), recording=recording, device="cpu")
    unit = result.unit("smooth")
    assert unit.source == "recorded"
    assert unit.evidence.verdict == "verified", unit.evidence.detail
    assert unit.evidence.data["inputs"] == 3
    before, after = unit.evidence.data["compiles"]
    assert before == 5 and after == 0, unit.evidence.detail  # 0 + 1 + 4 fresh jits before; none after
    inputs = result.original.tasks["smooth"].inputs
    assert all("f32[5]" in text and "np." not in text for text in inputs.values())  # jax arrays stay jax


def test_recorded_calls_catch_a_wrong_hoist(recorded):
    root, recording = recorded
    result = verify_change(ORIGINAL, WRONG, str(root / "pkg" / "ops.py"), recording=recording, device="cpu")
    ev = result.unit("smooth").evidence
    assert ev.verdict == "mismatch"
    assert ev.input_source == "recorded" and "(recorded)" in ev.detail
    assert "values differ" in ev.detail


def test_record_command_through_verify_change(project):
    result = verify_change(
        ORIGINAL, HOISTED, str(project / "pkg" / "ops.py"), record_cmd=_command(), cwd=str(project), device="cpu"
    )
    assert result.notes[0].startswith("recorded 4 call(s) while running")
    unit = result.unit("smooth")
    assert unit.source == "recorded" and unit.evidence.verdict == "verified", unit.evidence.detail
    assert tuple(unit.evidence.data["compiles"]) == (7, 0)  # 0 + 1 + 4 + 2 (the NumPy call) before
    inputs = result.original.tasks["smooth"].inputs
    assert any("np.f32[3]" in text for text in inputs.values())  # a NumPy argument stays NumPy
