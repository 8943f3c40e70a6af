"""`jaxfix fix --output-format` and the base-install message (issue 17, parts 4 and 5).

The JSON document is validated against the schema jaxfix ships (`jaxfix.report.fix_schema`),
with and without --verify; SARIF against the published object model; and the message for an
install without the `verify` extra is checked in a real subprocess where `import numpy` fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from jaxfix.cli import app
from jaxfix.report.fix_schema import SCHEMA

TRAIN = '''\
from functools import partial

import jax
import jax.numpy as jnp


def step(w, x, lr):
    return w - lr * jnp.sin(w * x)


def train(w: jax.Array, x: jax.Array):
    for i in range(3):
        w = jax.jit(partial(step, lr=0.1))(w, x)
    return w
'''

REPO = Path(__file__).resolve().parent.parent


def cli(*args):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def train(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    return path


def test_fix_json_without_verify_matches_the_schema_and_replaces_the_diffs(train):
    code, out, err = cli("fix", "--output-format", "json", str(train))
    assert code == 1, err  # a dry run with changes, as in text mode
    document = json.loads(out)  # nothing but the document on stdout: no diff text
    jsonschema.validate(document, SCHEMA)
    assert document["mode"] == "dry-run" and document["verify"] is False
    [fix] = document["fixes"]
    assert fix["code"] == "JAX201" and fix["fix"]["evidence"] is None
    assert fix["written"] is False and fix["held_back"] is False
    [file] = document["files"]
    assert file["diff"].startswith(f"--- {train}") and "+_step_jit = jax.jit(partial(step, lr=0.1))" in file["diff"]
    assert document["summary"]["not_verified"] == 1 and document["summary"]["fixes"] == 1
    assert train.read_text() == TRAIN


@pytest.mark.slow
def test_fix_verify_json_carries_verdict_source_compiles_and_times_and_still_writes(train):
    code, out, err = cli("fix", "--verify", "--write", "--allow-dirty", "--device", "cpu", "--output-format", "json", str(train))
    assert code == 0, (out, err)
    document = json.loads(out)
    jsonschema.validate(document, SCHEMA)
    assert document["mode"] == "write" and document["verify"] is True
    [fix] = document["fixes"]
    evidence = fix["fix"]["evidence"]
    assert evidence["verdict"] == "verified", evidence["detail"]
    assert evidence["input_source"] == "synthesized"
    assert evidence["compiles"] == [3 * evidence["inputs"], 0]
    assert len(evidence["time_per_call"]) == 2 and all(t > 0 for t in evidence["time_per_call"])
    assert fix["written"] is True and document["summary"]["files_written"] == 1
    assert "_step_jit" in train.read_text()  # --write still writes in json mode


def test_fix_sarif_and_github_list_the_applied_fixes(train):
    _, out, _ = cli("fix", "--output-format", "sarif", str(train))
    from sarif_pydantic import Sarif

    log = json.loads(out)
    Sarif.model_validate(log)
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "JAX201" and result["properties"]["fixApplied"] is True
    _, out, _ = cli("fix", "--output-format", "github", str(train))
    assert out.startswith("::warning file=") and "title=JAX201 fixed" in out and "(not verified)" in out


def test_fix_json_refuses_stdin_with_write():
    result = CliRunner().invoke(app, ["fix", "-", "--write", "--output-format", "json"], input="x = 1\n")
    assert result.exit_code == 2 and "cannot also print --output-format json" in result.stderr


def _without_numpy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the CLI in a fresh interpreter where `import numpy` fails, as on a base install."""
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "numpy.py").write_text("raise ImportError(\"No module named 'numpy'\")\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shim), str(REPO), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
    return subprocess.run(
        [sys.executable, "-c", "from jaxfix.cli import main; main()", *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )


@pytest.mark.parametrize("command", [["verify"], ["fix", "--verify"]])
def test_without_the_verify_extra_one_line_names_the_install_command_and_exit_2(tmp_path, train, command):
    done = _without_numpy(tmp_path, *command, str(train))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr == 'jaxfix: verification needs jax and numpy (numpy missing): pip install "jaxfix[verify]"\n'
    assert done.stdout == ""
    # the same install still checks and fixes: only verification needs the extra
    assert _without_numpy(tmp_path, "check", str(train)).returncode == 1
