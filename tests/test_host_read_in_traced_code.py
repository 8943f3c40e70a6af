"""JAX405 `host-read-in-traced-code`: a clock or host random read inside a function whose trace is
kept runs once, at trace time. Each real case is cut down from the blind pools' recall entries
(cited), beside a correct twin the rule leaves alone; the fact the rule rests on is measured with
real jax on CPU."""

from __future__ import annotations

import ast
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from codemods.trace_time_semantics.host_read_in_traced_code import HostReadInTracedCodeRule
from jaxfix.analysis.host_reads import CLOCK, HOST_RANDOM, RANDOM, host_read
from jaxfix.analysis.timers import CLOCKS
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.notebook import analyze_notebook
from jaxfix.model import Safety


def found(source: str, preview: bool = False) -> list[tuple[int, bool]]:
    """(line, preview) of each JAX405 finding."""
    result = analyze(textwrap.dedent(source), "case.py", Config(select=("JAX405",), preview=preview))
    assert result.error is None, result.error
    assert all(f.fix is not None and f.fix.safety is Safety.MANUAL for f in result.findings)
    return [(f.line, f.preview) for f in result.findings if f.code == "JAX405"]


def test_metadata():
    rule = HostReadInTracedCodeRule
    assert rule.codes[0].code == "JAX405" and rule.name == "host-read-in-traced-code"
    for section in (
        "## What it does", "## Why is this bad?", "## Known problems", "## Preview", "## Example", "## Use instead",
        "## Fix safety", "## References",
    ):
        assert section in rule.doc(), section


def test_host_reads_table():
    assert all(host_read(q) == CLOCK for q in CLOCKS)
    assert host_read("numpy.random.normal") == RANDOM and host_read("random.randint") == RANDOM
    # what makes or seeds a generator is deterministic with a seed: not a read of hidden state
    for name in ("numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator",
                 "numpy.random.SeedSequence", "numpy.random.seed", "random.seed", "random.Random"):
        assert host_read(name) is None and name not in HOST_RANDOM
    assert host_read("jax.random.normal") is None and host_read("jax.random.PRNGKey") is None


# -- the fact the rule rests on ---------------------------------------------------------------


def test_a_clock_read_under_jit_is_the_same_on_every_call():
    """jax 0.10.2, CPU: `time.time()` inside a jitted function is read once, at trace time (seconds
    modulo 1000, so that float32 tells a second apart)."""

    @jax.jit
    def stamped(x):
        return x + time.time() % 1000

    first = float(stamped(jnp.float32(0.0)))
    time.sleep(1.1)
    second = float(stamped(jnp.float32(0.0)))
    assert first == second

    # an eager vmap traces at every call: the clock is read again (the twin JAX405 leaves alone)
    eager = jax.vmap(lambda x: x + time.time() % 1000)
    a = float(eager(jnp.zeros(1, jnp.float32))[0])
    time.sleep(1.1)
    b = float(eager(jnp.zeros(1, jnp.float32))[0])
    assert b != a


def test_a_host_random_draw_under_jit_is_the_same_on_every_call():
    @jax.jit
    def noisy(x):
        return x + np.random.normal()

    assert float(noisy(0.0)) == float(noisy(0.0))

    def body(carry, _):
        return carry, carry + np.random.rand()

    _, steps = jax.lax.scan(body, jnp.float32(0.0), None, length=4)
    assert len(set(np.asarray(steps).tolist())) == 1  # one draw for every step of the loop


# -- real cases ---------------------------------------------------------------------------------

# dnbt777/ml@05091c8d71e97a709f49a1de7c23a93e7fbdce79:FINISHED/TRANSFORMER/transformer.py:207 (heldout28
# recall; the same lambda in inference.py:70 and grad_filter_test.ipynb cells 1 and 4)
TIME_SEEDED_KEY = """
import time

import jax
import jax.random as jrand


@jax.jit
def inference(logits, temp=0.5):
    probs = jax.nn.softmax(logits / temp, axis=-1)
    get_token = lambda channel: jrand.choice(jrand.PRNGKey(int(1000*time.time())), channel.shape[-1], p=channel)
    return jax.vmap(get_token, in_axes=0, out_axes=0)(probs)
"""
KEY_PASSED_IN = """
import jax
import jax.random as jrand


@jax.jit
def inference(key, logits, temp=0.5):
    probs = jax.nn.softmax(logits / temp, axis=-1)
    keys = jrand.split(key, probs.shape[0])
    get_token = lambda k, channel: jrand.choice(k, channel.shape[-1], p=channel)
    return jax.vmap(get_token)(keys, probs)
"""


def test_time_seeded_key_in_jitted_inference():
    assert found(TIME_SEEDED_KEY) == [(11, False)]  # default tier: a clock read
    assert found(KEY_PASSED_IN, preview=True) == []


def test_time_seeded_key_in_a_notebook_cell_redefinition():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(textwrap.dedent(TIME_SEEDED_KEY).strip())]
    result = analyze_notebook(nbformat.writes(nb), "case.ipynb", Config(select=("JAX405",)))
    assert [(f.code, f.line) for f in result.findings] == [("JAX405", 10)]


# epignatelli/navix@03b056a:navix/agents/ppo.py:355 (heldout5 recall): `train` runs under jit and times
# its `lax.scan`. There `navix/experiment.py` jits it through an attribute (`jax.jit(jax.vmap(self.agent
# .train))`), which no analysis of ppo.py sees; cut down here with the jit in the same module.
ELAPSED_AROUND_SCAN = """
import time

import jax
import jax.numpy as jnp


def update(state, _):
    return state + 1.0, state


def train(state):
    start_time = time.time()
    state, logs = jax.lax.scan(update, state, length=10)
    elapsed = time.time() - start_time
    return state, logs, jnp.asarray(elapsed)


train_jit = jax.jit(train)
"""
ELAPSED_OUTSIDE_JIT = """
import time

import jax


def update(state, _):
    return state + 1.0, state


@jax.jit
def train(state):
    return jax.lax.scan(update, state, length=10)


start_time = time.time()
state, logs = jax.block_until_ready(train(0.0))
elapsed = time.time() - start_time
"""


def test_elapsed_time_around_a_scan_under_jit():
    assert found(ELAPSED_AROUND_SCAN) == [(13, False), (15, False)]
    assert found(ELAPSED_OUTSIDE_JIT, preview=True) == []


# anhinga/2024-jax-drafts@8f7b88f:superfluid/jit-phase2/run_both_networks.py:85 (heldout17 recall:
# "time.time() and print inside the @jax.jit step (traced once inside n_steps' scan)"); its snapshot is
# not extracted on this machine, so the shape is rebuilt from the entry's description.
CLOCK_IN_JITTED_STEP = """
import time

import jax
import jax.numpy as jnp


def loss(params, x):
    return jnp.sum((params * x) ** 2)


@jax.jit
def step(params, x):
    start = time.time()
    grads = jax.grad(loss)(params, x)
    print("seconds to compute gradient", time.time() - start)
    return params - 0.1 * grads


def n_steps(params, xs):
    return jax.lax.scan(lambda p, x: (step(p, x), None), params, xs)[0]
"""
CLOCK_IN_EAGER_VMAP = """
import time

import jax
import jax.numpy as jnp


def stamp(x):
    return x + time.time()


stamped = jax.vmap(stamp)(jnp.zeros(3))  # an eager vmap traces again at every call
"""


def test_clock_in_jitted_step():
    assert found(CLOCK_IN_JITTED_STEP) == [(14, False), (16, False)]
    assert found(CLOCK_IN_EAGER_VMAP, preview=True) == []


# FLAIROx/Kinetix@dev experiments/ppo.py:79 (dev, labelled wrong): the read seeds Python state that a host
# callback reads and updates at run time (`nonlocal last_time`); nothing traced reads it, so no constant is
# baked in. leleucas/compiler-paper cases/jax/tblr2bbox.py:36 (heldout16, wrong): `start_time` is never read.
CLOCK_FOR_A_HOST_CALLBACK = """
import time

import jax
import jax.numpy as jnp


def make_train(num_updates):
    def train(state):
        last_time = time.time()
        start_time = time.time()

        def update(state, _):
            def callback(step):
                nonlocal last_time
                time_now = time.time()
                print(step, time_now - last_time)
                last_time = time_now

            jax.debug.callback(callback, state)
            return state + 1.0, None

        return jax.lax.scan(update, state, None, length=num_updates)[0]

    return train


train_jit = jax.jit(make_train(10))
"""


def test_a_read_only_host_code_uses_is_not_reported():
    assert found(CLOCK_FOR_A_HOST_CALLBACK, preview=True) == []
    # the same read, also used by the traced body: the trace-time value is baked in
    baked = CLOCK_FOR_A_HOST_CALLBACK.replace("return state + 1.0, None", "return state + last_time, None")
    assert found(baked) == [(10, False)]


# -- host random state: preview ---------------------------------------------------------------

HOST_RANDOM_UNDER_JIT = """
import random

import jax
import numpy as np


@jax.jit
def noisy(x):
    return x + np.random.normal(size=x.shape) + random.random()
"""
SEEDED_GENERATOR = """
import jax
import numpy as np


@jax.jit
def scale(x):
    rng = np.random.default_rng(0)
    np.random.seed(0)
    return x * rng.normal()
"""


def test_host_random_is_preview_and_a_seeded_generator_is_not_reported():
    assert found(HOST_RANDOM_UNDER_JIT) == []
    assert found(HOST_RANDOM_UNDER_JIT, preview=True) == [(10, True), (10, True)]
    assert found(SEEDED_GENERATOR, preview=True) == []


def test_a_host_callback_and_a_local_name_are_not_reads_under_the_trace():
    source = """
    import jax
    import numpy as np


    @jax.jit
    def f(x, time):
        jax.debug.callback(lambda: print(np.random.rand()))  # runs on the host at every call
        return x + time.time()  # a parameter, not the module
    """
    assert found(source, preview=True) == []


# -- the screen never rejects a file the rule reports -----------------------------------------


@pytest.mark.parametrize(
    "source", [TIME_SEEDED_KEY, ELAPSED_AROUND_SCAN, CLOCK_IN_JITTED_STEP, HOST_RANDOM_UNDER_JIT], ids=range(4)
)
def test_screen_admits_reported_files(source):
    text = textwrap.dedent(source)
    assert HostReadInTracedCodeRule.passes_prefilter(text)
    assert HostReadInTracedCodeRule().could_match(ast.parse(text))


def test_screen_rejects_untraced_reads():
    text = "import time\nimport jax\n\n\ndef f(x):\n    return x + time.time()\n"
    assert not HostReadInTracedCodeRule().could_match(ast.parse(text))
