"""docs/preview.md states when a JAX201 finding is preview as the code decides it
(`codemods.jit_placement.preview.loop_path`, `module_def_path`); a newcomer found the doc saying
`jax.jit(partial(...))` in a loop is "never preview" while a sweep over a list of floats was.
Each case the doc names, through the real command line (`check --preview --output-format json`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = '''\
from functools import partial

import jax
import jax.numpy as jnp


def simulate(y, k=1.0):
    return y * k


def listed(y):
    for k in [0.5, 1.0, 2.0]:
        y = jax.jit(partial(simulate, k=k))(y)  # PREVIEW
    return y


def listed_by_name(y):
    ks = (0.5, 1.0, 2.0)
    for k in ks:
        y = jax.jit(partial(simulate, k=k))(y)  # PREVIEW
    return y


def listed_default(y, ks=[0.5, 1.0]):
    for k in ks:
        y = jax.jit(partial(simulate, k=k))(y)  # PREVIEW
    return y


def listed_enumerated(y):
    for i, k in enumerate([0.5, 1.0]):
        y = jax.jit(partial(simulate, k=k))(y)  # PREVIEW
    return y


def listed_joined(y):
    for k in [0.5] + [1.0, 2.0]:
        y = jax.jit(lambda v: v * k)(y)  # PREVIEW
    return y


def steps(y, n):
    for k in range(n):
        y = jax.jit(partial(simulate, k=k))(y)  # DEFAULT
    return y


def data(y, ks):
    for k in ks:
        y = jax.jit(partial(simulate, k=k))(y)  # DEFAULT
    return y


def comprehension(y):
    return [jax.jit(partial(simulate, k=k))(y) for k in [0.5, 1.0, 2.0]]  # DEFAULT


listed_default(jnp.ones(3))

for n in range(100):
    @jax.jit
    def scaled(v):  # PREVIEW
        return v * n
    print(scaled(jnp.ones(3)))
'''


def test_jax201_preview_is_what_docs_preview_md_says(tmp_path):
    (tmp_path / "cases.py").write_text(CASES)
    run = subprocess.run(
        [sys.executable, "-m", "jaxfix", "check", "--no-cache", "-q", "--preview", "--select", "JAX201",
         "--output-format", "json", "cases.py"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, check=False,
    )
    assert run.returncode == 1, run.stderr
    found = {f["line"]: f for f in json.loads(run.stdout)}
    lines = CASES.splitlines()
    expected = {n: "# PREVIEW" in text for n, text in enumerate(lines, 1) if "# PREVIEW" in text or "# DEFAULT" in text}
    assert {n: found[n]["preview"] for n in expected} == expected
    # whatever the fix does with the values: here it makes the listed float a traced argument
    assert "`k` becomes a traced argument (Python number)" in found[13]["message"]
    text = (ROOT / "docs" / "preview.md").read_text()
    assert "are never preview" not in text and "whatever the values are and whatever the fix does with them" in text
