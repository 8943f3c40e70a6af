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


# A new user's DQN-style script (written for this session's new-user run): the agent keeps a
# factory's dict of jitted functions on itself (`self.fns = make_fns(lr)`) and its `train` returns
# the loss of `self.fns["update"](...)`; `with Timer() as t:` times 200 such steps.
DICT_ON_SELF = """
import time

import jax
import jax.numpy as jnp


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start


def make_fns(scale):
    @jax.jit
    def update(params, batch):
        return params - scale * batch.mean(0), jnp.mean(batch @ params)

    return {"update": update}


class Agent:
    def __init__(self, dim):
        self.fns = make_fns(0.1)
        self.params = jnp.ones((dim,))

    def train(self, batch):
        self.params, loss = self.fns["update"](self.params, batch)
        return loss


def main(n):
    agent = Agent(4)
    losses = []
    with Timer() as t:
        for _ in range(n):
            losses.append(agent.train(jnp.ones((8, 4))))
    return float(losses[-1]), t.elapsed
"""


def test_a_method_returning_a_jitted_item_of_an_attribute(tmp_path):
    assert lines_at(DICT_ON_SELF) == ["with Timer() as t:"]
    fixed = analysed(DICT_ON_SELF, fix=True).fixed_source
    assert "losses.append(jax.block_until_ready(agent.train(jnp.ones((8, 4)))))" in fixed
    before = load_as_module(tmp_path / "before.py", textwrap.dedent(DICT_ON_SELF))
    after = load_as_module(tmp_path / "after.py", fixed)
    assert before.main(3)[0] == after.main(3)[0]


def lines_at(source: str) -> list[str]:
    text = textwrap.dedent(source).splitlines()
    return [text[n - 1].strip() for n in lines(source)]
