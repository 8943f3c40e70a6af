"""`jaxfix verify` and `jaxfix fix --verify` end to end (typer's runner, real files, real children)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from jaxfix.cli import app

# JAX001 removes a stale noqa code: a comment-only rewrite, verified by equal syntax trees.
STALE_NOQA = """\
import jax.numpy as jnp


def f(x):  # noqa: JAX201
    return jnp.sin(x)
"""


def cli(*args):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_fix_verify_shows_evidence_under_the_diff(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(STALE_NOQA)
    code, out, err = cli("fix", "--verify", "--device", "cpu", str(path))
    assert code == 1  # a dry run with changes
    diff_at = out.index("-def f(x):  # noqa: JAX201")
    evidence_at = out.index("JAX001 verified: the rewrite changes no code")
    assert evidence_at > diff_at
    assert "Verified 1 of 1 fix; 0 mismatch; 0 unverifiable." in err
    assert path.read_text() == STALE_NOQA


def test_fix_verify_write_writes_a_verified_file(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(STALE_NOQA)
    code, out, err = cli("fix", "--verify", "--write", "--allow-dirty", "--device", "cpu", str(path))
    assert code == 0, (out, err)
    assert "# noqa" not in path.read_text()
    assert "held back" not in err


def test_verify_json_carries_the_evidence(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(STALE_NOQA)
    code, out, err = cli("verify", "--output-format", "json", "--device", "cpu", str(path))
    assert code == 0, err
    [item] = json.loads(out)
    evidence = item["fix"]["evidence"]
    assert evidence["verdict"] == "verified" and evidence["reason"] == "equal-syntax-trees"
    assert path.read_text() == STALE_NOQA  # verify never writes


def test_verify_with_nothing_to_fix_reports_nothing(tmp_path):
    path = tmp_path / "clean.py"
    path.write_text("import jax\n")
    code, out, err = cli("verify", "--device", "cpu", str(path))
    assert code == 0 and out == ""
    assert "Verified 0 of 0 fixes" in err


@pytest.mark.parametrize("device", ["gpu", "tpu"])
def test_unavailable_device_is_reported_not_guessed(device):
    from jaxfix.verify.device import choose_device

    choice = choose_device(device)
    if choice.available:  # pragma: no cover - only on a machine with that accelerator
        assert choice.description.split(":")[0] in ("cuda", "rocm", "gpu", "tpu")
    else:
        assert choice.description.startswith(f"no {device} available")
        assert "JAX_PLATFORMS=" in choice.description


def test_cpu_and_auto_device_choice():
    from jaxfix.verify.device import choose_device

    assert choose_device("cpu").platforms == "cpu"
    auto = choose_device("auto")
    assert auto.available and auto.description  # cpu here unless an accelerator plugin is installed
    assert not choose_device("quantum").available


def test_a_fix_on_an_unavailable_device_is_unverifiable_with_the_reason(tmp_path):
    from jaxfix.verify.api import verify_change
    from jaxfix.verify.device import choose_device

    if choose_device("tpu").available:  # pragma: no cover - only on a TPU host
        pytest.skip("a TPU is present: nothing unavailable to test here")
    path = tmp_path / "m.py"
    original = "import jax\nimport jax.numpy as jnp\n\n\ndef f(x: jax.Array):\n    return jnp.sin(x)\n"
    path.write_text(original)
    result = verify_change(original, original.replace("sin", "cos"), str(path), device="tpu")
    ev = result.unit("f").evidence
    assert ev.verdict == "unverifiable" and ev.detail.startswith("no tpu available")
    assert result.original is None  # nothing was run


RUNNER = """\
import jax
import jax.numpy as jnp


class Runner:
    def run(self, xs):
        total = jnp.zeros(())
        for x in xs:
            total = total + jax.jit(lambda v: v * 2.0)(x)
        return total
"""

RUNNER_EXAMPLES = """\
import jax.numpy as jnp

from jaxfix.verify import call

EXAMPLES = {"Runner.run": lambda mod: [call(mod.Runner(), [jnp.ones(3), jnp.arange(3.0)]), call(mod.Runner(), [])]}
"""


@pytest.mark.slow
def test_fix_verify_write_holds_back_what_it_cannot_verify_and_writes_it_with_examples(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(RUNNER)
    code, out, err = cli("fix", "--verify", "--write", "--allow-dirty", "--device", "cpu", str(path))
    assert code == 1
    assert f"{path}: held back 1 fix(es), not written: JAX201 at line 9 (unverifiable)" in err
    assert "Runner.run is a method: it needs an instance" in err
    assert path.read_text() == RUNNER

    examples = tmp_path / "runner_examples.py"
    examples.write_text(RUNNER_EXAMPLES)
    code, out, err = cli("fix", "--verify", "--write", "--allow-dirty", "--device", "cpu", "--examples", str(examples), str(path))
    assert code == 0, err
    assert "held back" not in err and "Verified 1 of 1 fix" in err
    assert "jax.jit(lambda v: v * 2.0)(x)" not in path.read_text()
