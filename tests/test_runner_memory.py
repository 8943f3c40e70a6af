"""A file's analysis leaves nothing of it behind: the analyses' memos of the last file
(`analysis.filememo`) are dropped when its job ends, so its trees are freed at once instead of
being walked by the cyclic collector after every file."""

from __future__ import annotations

import ast
import gc

from jaxfix.engine.config import Config
from jaxfix.engine.runner import Job, run_job

# Correct code every screen family looks into, and clears without a libcst parse (a file that
# gets one keeps its tree in the rules' facts until the collector frees them: a few files a run).
PROGRAM = '''
import functools
import jax
import jax.numpy as jnp


class Settings:
    @functools.cached_property
    def table(self):
        return {"scale": 2.0}


@jax.jit
def step(x):
    if x.ndim > 1:
        x = x.sum(axis=0)
    return jnp.where(x > 0, x, -x)


def train(xs):
    for x in xs:
        step(x)
'''


def _modules() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, ast.Module))


def test_a_finished_job_keeps_no_tree_of_its_file(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(PROGRAM)
    job = Job(str(path), Config(select=("ALL",)), fix=False)
    run_job(job)  # imports and first-use caches settle
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()  # only reference counting frees what the job left
    try:
        before = _modules()
        outcome = run_job(job)
        after = _modules()
    finally:
        if enabled:
            gc.enable()
    assert outcome.result.findings == [] and outcome.result.error is None
    assert after == before
