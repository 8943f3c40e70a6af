"""A jit-placement fix must pay: verified but no fewer steady-state compiles is `ineffective`
(`jaxfix/verify/payoff.py`), and `--verify --write` holds it back. Real children, real jax on CPU."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from jaxfix.cli import app
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.write_policy import all_verified, held_back
from jaxfix.model import Evidence, Finding, Fix, Safety
from jaxfix.verify import payoff
from jaxfix.verify.api import verify_change

# The paninski-lab/eks shape: the loop body makes a fresh closure each block, and the "fix" hoists
# the jitted function with that closure as a static argument: behaviour kept, nothing saved.
ORIGINAL = """\
from functools import partial

import jax
import jax.numpy as jnp


def run(f, g, x):
    return f(g(x))


def blocks(xs, scales):
    out = []
    for x, s in zip(xs, scales):
        def scaled(v):
            return v * s

        out.append(jax.jit(partial(run, jnp.tanh, scaled))(x))
    return out
"""

STATIC_CLOSURE = """\
from functools import partial

import jax
import jax.numpy as jnp


def run(f, g, x):
    return f(g(x))


_run_jit = jax.jit(run, static_argnames=("f", "g"))


def blocks(xs, scales):
    out = []
    for x, s in zip(xs, scales):
        def scaled(v):
            return v * s

        out.append(_run_jit(jnp.tanh, scaled, x))
    return out
"""

DRIVE = """\
import jax.numpy as jnp


def drive(mod):
    xs = [jnp.ones(3), jnp.arange(3.0), -jnp.ones(3), jnp.zeros(3)]
    return {"out": mod.blocks(xs, [0.5, 1.5, 2.0, 3.0])}
"""


def _finding(source: str, safety: Safety = Safety.SAFE) -> Finding:
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "jax.jit(partial(run" in text)
    column = source.splitlines()[line - 1].index("jax.jit(partial(run") + 1
    return Finding("JAX201", "jit-in-loop", "m.py", line, column, line, column + 10, "jit in loop", Fix("hoist", safety))


def test_a_hoist_that_keeps_every_compile_is_ineffective_and_held_back(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(ORIGINAL)
    drive = tmp_path / "m_drive.py"
    drive.write_text(DRIVE)
    finding = _finding(ORIGINAL)
    result = verify_change(ORIGINAL, STATIC_CLOSURE, str(path), findings=[finding], examples=str(drive), device="cpu")
    [checked] = result.findings
    evidence = checked.fix.evidence
    assert evidence.verdict == "ineffective", evidence.detail
    assert evidence.data["payoff"] == [4, 4]
    assert evidence.headline == "4 compiles -> 4 (steady state): no compile removed"
    assert evidence.detail.startswith("4 compiles -> 4")
    assert not all_verified(result.findings)
    assert "(ineffective)" in held_back(str(path), result.findings)


def test_a_hoist_that_removes_compiles_stays_verified(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(ORIGINAL)
    drive = tmp_path / "m_drive.py"
    drive.write_text(DRIVE)
    # what jaxfix itself proposes: the fresh closure is no static argument; the loop's value is
    # passed instead (hand-written here, as the planner makes this fix manual)
    paying = ORIGINAL.replace("jax.jit(partial(run, jnp.tanh, scaled))(x)", "_run_jit(x, s)").replace(
        "def blocks(", "_run_jit = jax.jit(lambda v, s: jnp.tanh(v * s))\n\n\ndef blocks("
    )
    result = verify_change(ORIGINAL, paying, str(path), findings=[_finding(ORIGINAL)], examples=str(drive), device="cpu")
    evidence = result.findings[0].fix.evidence
    assert evidence.verdict == "verified", evidence.detail
    assert evidence.data["compiles"] == [4, 0]


def _verified(compiles, by_function=None) -> Evidence:
    data = {"compiles": compiles}
    if by_function is not None:
        data["compiles_by_function"] = by_function
    return Evidence("verified", "verified on 1 drive run", data, family="jit-placement")


def test_each_of_several_fixes_is_judged_on_its_own_function():
    source = "import jax\n\ndef f(xs, k):\n    for x in xs:\n        jax.jit(lambda v: v * k)(x)\n        jax.jit(step)(x)\n"
    lam = Finding("JAX201", "jit-in-loop", "m.py", 5, 9, 5, 30, "m", Fix("t", Safety.SAFE))
    evidence = _verified([6, 3], [{"jit(<lambda>)": 3, "jit(step)": 3}, {"jit(<lambda>)": 0, "jit(step)": 3}])
    assert payoff.compiled_name(source, 5, 9) == "<lambda>"
    assert payoff.judge(lam, evidence, source, paying_fixes=2).verdict == "verified"
    other = Finding("JAX201", "jit-in-loop", "m.py", 6, 9, 6, 30, "m", Fix("t", Safety.SAFE))
    judged = payoff.judge(other, evidence, source, paying_fixes=2)
    assert judged.verdict == "ineffective" and judged.data["payoff"] == [3, 3]


def test_what_is_not_judged():
    source = "import jax\n"
    rewrap = Finding("JAX203", "jit-rewrap-in-loop", "m.py", 1, 1, 1, 2, "m", Fix("t", Safety.SAFE))
    assert payoff.judge(rewrap, _verified([0, 0]), source, 1).verdict == "verified"  # a cache hit already
    fresh = Finding("JAX201", "jit-in-loop", "m.py", 1, 1, 1, 2, "m", Fix("t", Safety.SAFE))
    quiet = payoff.judge(fresh, _verified([0, 0]), source, 1)
    assert quiet.verdict == "verified" and "compile nothing" in quiet.notes[-1]
    mismatch = Evidence("mismatch", "differs", {"compiles": [3, 3]})
    assert payoff.judge(fresh, mismatch, source, 1).verdict == "mismatch"
    eager = Evidence("verified", "v", {"compiles": [0, 0], "reference": "eager"})
    assert payoff.judge(fresh, eager, source, 1) is eager


# A one-element loop on the only inputs there are (the __main__ block): the planner keeps `factor`
# (kind unknown) captured above the loop, so each call of `scale_all` still compiles once.
ONE_ITERATION = """\
import operator

import jax
import jax.numpy as jnp


def scale_all(xs, factor):
    out = []
    for x in xs:
        out.append(jax.jit(lambda v: operator.mul(v, factor))(x))
    return out


if __name__ == "__main__":
    settings = {"factor": 2.0}
    print(scale_all([jnp.ones(3)], settings["factor"]))
"""


def test_fix_verify_write_holds_back_an_ineffective_fix(tmp_path):
    path = tmp_path / "scale.py"
    path.write_text(ONE_ITERATION)
    result = analyze(ONE_ITERATION, str(path), Config(select=("JAX2",)), fix=True)
    assert [f.fix.safety for f in result.findings] == [Safety.SAFE]
    assert "scale_all_lambda_jit = jax.jit(lambda v: operator.mul(v, factor))" in result.fixed_source
    runner = CliRunner()
    outcome = runner.invoke(app, ["fix", "--verify", "--write", "--allow-dirty", "--device", "cpu", str(path)])
    assert outcome.exit_code == 1
    assert "JAX201 ineffective: 1 compiles -> 1 (steady state): no compile removed" in outcome.stderr
    assert "held back 1 fix(es), not written: JAX201 at line 10 (ineffective)" in outcome.stderr
    assert "1 ineffective (no compile removed)" in outcome.stderr
    assert path.read_text() == ONE_ITERATION
    json_run = runner.invoke(app, ["verify", "--output-format", "json", "--device", "cpu", str(path)])
    [item] = json.loads(json_run.stdout)
    assert item["fix"]["evidence"]["verdict"] == "ineffective"


# A training script's two bugs in one file: a traced `if` (its fix makes the original run eagerly
# for verification) and a jitted partial rebuilt every step (its evidence needs compile counts).
MIXED = """\
from functools import partial

import jax
import jax.numpy as jnp


def loss_fn(scale, w, x):
    return jnp.mean((x * w - scale) ** 2)


@jax.jit
def clip(g, limit):
    if jnp.abs(g).max() > limit:
        return g / jnp.abs(g).max() * limit
    return g


def train(w, xs):
    for x in xs:
        g = jax.jit(jax.grad(partial(loss_fn, 2.0), argnums=0))(w, x)
        w = w - 0.1 * clip(g, 1.0)
    return w
"""

MIXED_DRIVE = """\
import jax.numpy as jnp


def drive(mod):
    return {"w": mod.train(jnp.ones(3), [jnp.arange(3.0) + i for i in range(4)])}
"""


def test_jit_placement_beside_a_control_flow_fix_gets_compile_counts(tmp_path):
    """The control-flow fix alone is the reference for the hoist: both run under jit and the
    counts show the per-step compiles gone."""
    from jaxfix.verify.api import verify_result

    path = tmp_path / "train.py"
    path.write_text(MIXED)
    drive = tmp_path / "train.drive.py"
    drive.write_text(MIXED_DRIVE)
    result = analyze(MIXED, str(path), Config(select=("JAX2", "JAX3"), unsafe_fixes=True), fix=True)
    assert sorted(f.code for f in result.fixes_applied) == ["JAX201", "JAX301"]
    verification = verify_result(result, examples=str(drive), device="cpu", timeout=120)
    by_code = {f.code: f.fix.evidence for f in verification.findings}
    assert by_code["JAX301"].verdict == "verified", by_code["JAX301"].detail
    hoist = by_code["JAX201"]
    assert hoist.verdict == "verified", hoist.detail
    before, after = hoist.data["compiles"]
    assert before > after == 0, hoist.detail
    # alone, the traced `if` raises in both versions: the hoist is judged beside the control-flow fix
    assert any(note.startswith("JAX201: judged on the file with its other fixes applied (JAX301)") for note in verification.notes)
    assert "judged on the file with its other fixes applied (JAX301): alone, unverifiable:" in hoist.detail.splitlines()[1]
