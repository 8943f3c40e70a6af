"""JAX501 on a timed call of a method of an object whose class the file defines: `agent.train(batch)`
between two clock reads, where `Agent.train` runs a jitted step and hands back its result unwaited
(as the result itself, an attribute it stored, or one element of a returned tuple). forhaoliu/
jax_sac@<heldout29> sac_main.py:162 (`sac.train(state, batch, rng)`, `SAC.train` returning
`state, rng, metrics` of a pmapped step) and gzqaq/rl-by-jax@<heldout29> examples/dqn_main.py:81
were missed recall entries of this shape (their classes live in another module, which this does
not read yet). A method that waits on its work, a property, or an object of a class the file does
not show stays silent. The fixed program runs and gives the same numbers."""

from __future__ import annotations

import textwrap

from fixture_cases import load_as_module

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

AGENT = """
import time

import jax
import jax.numpy as jnp


@jax.jit
def train_step(state, batch):
    return state + batch.sum(), batch.mean()


class Agent:
    def __init__(self):
        self.state = jnp.zeros(())

    def train(self, batch):
        self.state, loss = train_step(self.state, batch)
        return self.state

    def train_pair(self, batch):
        state, loss = train_step(self.state, batch)
        self.state = state
        return state, loss


def main(n):
    agent = Agent()
    batch = jnp.ones(10)
    start = time.time()
    for _ in range(n):
        agent.train(batch)
    elapsed = time.time() - start
    return agent.state, elapsed


def main_pair(n):
    agent = Agent()
    batch = jnp.ones(10)
    start = time.time()
    for _ in range(n):
        state, loss = agent.train_pair(batch)
    elapsed = time.time() - start
    return state, elapsed
"""


def analysed(source: str, fix: bool = False):
    result = analyze(textwrap.dedent(source), "train.py", Config(select=("JAX501",)), fix=fix)
    assert result.error is None, result.error
    return result


def lines(source: str) -> list[int]:
    return [f.line for f in analysed(source).findings]


def _line(source: str, call: str) -> int:
    """The line of the clock read after `call` (where JAX501 reports)."""
    lines = textwrap.dedent(source).splitlines()
    start = next(i for i, line in enumerate(lines) if call in line)
    return next(i + 1 for i, line in enumerate(lines) if i > start and "time.time() - start" in line)


def test_a_method_returning_its_jitted_work_is_timed_work(tmp_path):
    assert lines(AGENT) == [_line(AGENT, "agent.train(batch)"), _line(AGENT, "agent.train_pair(batch)")]
    fixed = analysed(AGENT, fix=True).fixed_source
    assert "jax.block_until_ready(agent.train(batch))" in fixed
    assert lines(fixed) == []
    before = load_as_module(tmp_path / "before.py", textwrap.dedent(AGENT))
    after = load_as_module(tmp_path / "after.py", fixed)
    for name in ("main", "main_pair"):
        assert float(getattr(before, name)(5)[0]) == float(getattr(after, name)(5)[0]) == 50.0


def test_a_method_that_waits_or_is_not_shown_is_not_timed_work():
    waits = AGENT.replace("        return self.state\n", "        return float(self.state)\n", 1)
    assert lines(waits) == [_line(waits, "agent.train_pair(batch)")]
    prop = AGENT.replace("    def train(self, batch):", "    @property\n    def train(self, batch):")
    assert lines(prop) == [_line(prop, "agent.train_pair(batch)")]
    # an object the file does not show the class of: what its method does is not known here
    unknown = AGENT.replace("    agent = Agent()\n", "    agent = make_agent()\n")
    assert lines(unknown) == []
    # the class's method runs no compiled work
    host = AGENT.replace("        self.state, loss = train_step(self.state, batch)\n", "        loss = 0\n", 1)
    assert lines(host) == [_line(host, "agent.train_pair(batch)")]
