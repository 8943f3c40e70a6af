"""JAX501 on `timeit.timeit(time_fn, number=n)` where `time_fn` is a def of one `return` of JAX work:
a lambda written as a def. timoklein/rejax@<heldout29> train.py:52 (a missed recall entry):
`def time_fn(): return vmap_train(algo, keys)` of a jitted vmap, timed three times with nothing
waiting. The fix wraps the def's returned value, as it wraps a lambda's body; the fixed program runs
and returns the same values. A def that waits, has more statements, or is decorated is left."""

from __future__ import annotations

import textwrap

from fixture_cases import load_as_module

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

TIMED = """
import timeit

import jax
import jax.numpy as jnp


def train(x):
    return x * 2


def bench(keys):
    vmap_train = jax.jit(jax.vmap(train))
    vmap_train(keys).block_until_ready()

    def time_fn():
        \"\"\"One fit.\"\"\"
        return vmap_train(keys)

    seconds = timeit.timeit(time_fn, number=3) / 3
    return time_fn(), seconds
"""


def analysed(source: str):
    result = analyze(textwrap.dedent(source), "bench.py", Config(select=("JAX501",)), fix=True)
    assert result.error is None, result.error
    return result


def test_a_def_of_one_return_of_jax_work_timed_by_timeit(tmp_path):
    result = analysed(TIMED)
    assert [(f.code, f.message.split(" returns")[0]) for f in result.findings] == [
        ("JAX501", "`timeit` times `time_fn`, which")
    ]
    fixed = result.fixed_source
    assert "return jax.block_until_ready(vmap_train(keys))" in fixed
    assert analysed(fixed).findings == []
    before = load_as_module(tmp_path / "before.py", textwrap.dedent(TIMED))
    after = load_as_module(tmp_path / "after.py", fixed)
    keys = before.jnp.arange(3.0)
    assert before.bench(keys)[0].tolist() == after.bench(keys)[0].tolist() == [0.0, 2.0, 4.0]


def test_a_def_that_waits_or_does_more_is_not_reported():
    waits = TIMED.replace("return vmap_train(keys)", "return float(vmap_train(keys).sum())")
    assert analysed(waits).findings == []
    more = TIMED.replace("        return vmap_train(keys)", "        out = vmap_train(keys)\n        return out")
    assert analysed(more).findings == []
    decorated = TIMED.replace("    def time_fn():", "    @staticmethod\n    def time_fn():")
    assert analysed(decorated).findings == []
