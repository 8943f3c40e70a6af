"""Verification judges what each family of fix promises, not only returned values (issue #31).

Each case runs real jax on CPU in the verifier's children: the fix jaxfix makes is verified, and a
plausible bug in it (the kinds `benchmarks/verify_mutants.py` injects into the generators) is
caught as `mismatch` or `ineffective`, never `verified`.
"""

from __future__ import annotations

import ast
import collections
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jaxfix.engine.config import Config
from jaxfix.engine.pipeline import analyze
from jaxfix.verify import branches, report
from jaxfix.verify.api import verify_change
from jaxfix.verify.changed import callables, parameter_uses
from jaxfix.verify.compare import FlatTree, Leaf, compare_printed, compare_trees
from jaxfix.verify.protocol import ArrayArg, VersionResult
from jaxfix.verify.runner import HANG_FLOOR, hang_limit
from jaxfix.verify.synthesize import synthesize
from jaxfix.verify.watch import reorder_scale, timing_verdict

ROOT = Path(__file__).resolve().parent.parent


def _fixed(path: Path, code: str, **options: str) -> tuple[str, str, list]:
    """`options`: the pytree-cache rules' options (`cache_style="field"`, the opt-in style)."""
    source = path.read_text()
    config = Config(select=(code,), unsafe_fixes=True, preview=True)  # the fixes, whatever their tier
    if options:
        config = config.with_options("pytree-cache", **{k.replace("_", "-"): v for k, v in options.items()})
    result = analyze(source, str(path), config, fix=True)
    assert result.fixed_source and result.fixes_applied, result.findings
    return source, result.fixed_source, result.fixes_applied


def _verdicts(source: str, rewritten: str, path: Path, findings) -> list[str]:
    verification = verify_change(source, rewritten, str(path), findings=findings, device="cpu", gather=False)
    return [f.fix.evidence.verdict for f in verification.findings]


def _details(source: str, rewritten: str, path: Path, findings) -> list[str]:
    verification = verify_change(source, rewritten, str(path), findings=findings, device="cpu", gather=False)
    return [f.fix.evidence.detail for f in verification.findings]


PRINTS = """\
import jax


@jax.jit
def step(x, y):
    print("x", x, "y", y)
    return x + y
"""


def test_printed_lines_are_compared(tmp_path):
    path = tmp_path / "prints.py"
    path.write_text(PRINTS)
    source, fixed, findings = _fixed(path, "JAX401")
    assert 'jax.debug.print("x {} y {}", x, y)' in fixed
    assert _verdicts(source, fixed, path, findings) == ["verified"]
    # the returned value is the same; only the printed text shows the arguments swapped
    swapped = fixed.replace('"x {} y {}", x, y)', '"x {} y {}", y, x)')
    details = _details(source, swapped, path, findings)
    assert details[0].startswith("mismatch") and "printed" in details[0], details


def test_printed_numbers_compare_within_float32_tolerance():
    def text(value: str) -> FlatTree:
        return FlatTree("PyTreeDef(*)", ("",), (Leaf(value, kind="object"),))

    # the eager original may print a double where the jitted rewrite prints a float32
    assert compare_printed("p", text("sum 0.30000000000000004"), text("sum 0.3")) is None
    assert compare_printed("p", text("x 1.5 y -2.0"), text("x -2.0 y 1.5")) is not None
    assert compare_printed("p", text("a | 1.0"), text("a1.0")) is not None
    # `{scale = }` of a Python number eagerly, of the traced array in the rewrite: the same value
    assert compare_printed("p", text("scale = 1.5!"), text("scale = Array(1.5, dtype=float32, weak_type=True)!")) is None
    # a `print` inside `jax.value_and_grad` shows the GradTracer even in the eager original
    # (disable_jit does not stop differentiation): its primal is what `jax.debug.print` prints
    assert compare_printed("p", text("loss GradTracer(primal=1.1032009, typeof(tangent)=f32[])"), text("loss 1.1032009")) is None
    assert compare_printed("p", text("v GradTracer(primal=[1. 1.], typeof(tangent)=f32[2])"), text("v [1. 1.]")) is None
    assert compare_printed("p", text("loss GradTracer(primal=1.5, typeof(tangent)=f32[])"), text("loss 2.5")) is not None


TIMING = """\
import time

import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    return jnp.tanh(x @ x.T) @ x / 8.0


def bench_loop(x: jax.Array, n: int):
    start = time.time()
    for _ in range(n):
        x = step(x)
    elapsed = time.time() - start
    return x, elapsed
"""


def test_a_wait_after_the_clock_read_is_ineffective(tmp_path):
    path = tmp_path / "timing.py"
    path.write_text(TIMING)
    source, fixed, findings = _fixed(path, "JAX501")
    # elapsed times are returned: compared as values, they differ run to run unless the clocks
    # are made deterministic while a call is watched
    assert _verdicts(source, fixed, path, findings) == ["verified"]
    late = source.replace("    elapsed = time.time() - start\n", "    elapsed = time.time() - start\n    jax.block_until_ready(x)\n")
    assert _verdicts(source, late, path, findings) == ["ineffective"]


def test_timing_verdict_counts_reads_after_a_wait():
    assert timing_verdict({"reads": 4, "waited": 0}, {"reads": 4, "waited": 2}) is None
    assert "2 of 4" in timing_verdict({"reads": 4, "waited": 2}, {"reads": 4, "waited": 2})
    assert timing_verdict({"reads": 0}, {"reads": 0}) is None  # nothing measured: no verdict


CACHED = """\
import functools

import flax
import jax
import jax.numpy as jnp


@flax.struct.dataclass
class Model:
    w: jax.Array

    @functools.cached_property
    def norm(self) -> jax.Array:
        return jnp.sum(jnp.sin(self.w))

    @functools.cached_property
    def total(self) -> jax.Array:
        return jnp.sum(self.w**2)
"""


@pytest.fixture(scope="module")
def cached(tmp_path_factory):
    path = tmp_path_factory.mktemp("cached") / "model.py"
    path.write_text(CACHED)
    # with_caches() is the field style's path; the class shows no instance read under a trace
    return (path, *_fixed(path, "JAX101", cache_style="field", unproven_pytrees=True))


def test_values_read_after_with_caches_are_compared(cached):
    path, source, fixed, findings = cached
    assert "_total_cache=self.total" in fixed
    assert _verdicts(source, fixed, path, findings) == ["verified"]
    first_value = fixed.replace("_total_cache=self.total", "_total_cache=self.norm")
    details = _details(source, first_value, path, findings)
    assert details[0].startswith("mismatch") and "with_caches()" in details[0], details


def test_a_with_caches_that_fills_nothing_is_ineffective(cached):
    path, source, fixed, findings = cached
    empty = fixed.replace("self.replace(_norm_cache=self.norm, _total_cache=self.total)", "self.replace()")
    assert empty != fixed
    assert _verdicts(source, empty, path, findings) == ["ineffective"]


IN_PLACE = """\
import jax
import jax.numpy as jnp


@jax.jit
def bump(x, v):
    x = x * 2
    x[1] = v
    x[0] -= 1.0
    return x


@jax.jit
def squares(xs):
    out = jnp.zeros(xs.shape)
    for k in range(xs.shape[0]):
        out[k] = xs[k] ** 2
    return out
"""


def test_in_place_updates_are_judged_against_numpy_semantics(tmp_path):
    path = tmp_path / "inplace.py"
    path.write_text(IN_PLACE)
    source, fixed, findings = _fixed(path, "JAX403")
    assert "x = x.at[1].set(v)" in fixed and "out = out.at[k].set(xs[k] ** 2)" in fixed
    # the original raises on JAX arrays even eagerly: the reference runs it on NumPy arrays
    assert set(_verdicts(source, fixed, path, findings)) == {"verified"}
    added = fixed.replace("x = x.at[1].set(v)", "x = x.at[1].add(v)")
    assert "mismatch" in _verdicts(source, added, path, findings)


def test_guesses_follow_the_parameters_use():
    source = "def f(x, n, m, k):\n    for i in range(n):\n        x = x + m[i, 0]\n    return x[k], x.shape\n"
    node = ast.parse(source).body[0]
    assert parameter_uses(node) == {"n": "int", "m": "array:2", "x": "array:1", "k": "int"}
    calls = synthesize(callables(source)["f"], guess=True)
    for call in calls:
        x, n, m, k = call.args
        assert isinstance(n, int) and isinstance(k, int)  # an int counter is not given 1.5
        assert isinstance(m, ArrayArg) and m.value.ndim == 2
        assert isinstance(x, ArrayArg)


def test_each_arm_counts_its_executions():
    source = "def f(xs):\n    t = 0\n    for x in xs:\n        if x > 0:\n            t += x\n    return t\n"
    arms = branches.arms_of(source, "f")
    # a loop of 117 trips that took the false arm each time, and whose true arm never ran
    lines = collections.Counter({2: 1, 3: 118, 4: 117, 6: 1})
    assert branches.describe(branches.coverage(arms, {"input 1": dict(lines)})) == "only the false branch of the `if` at line 4"
    lines.update({5: 3})
    assert branches.coverage(arms, {"input 1": dict(lines)})[4] == {"true": 3, "false": 114}


def test_reordering_rewrites_get_a_tolerance_scaled_to_the_loop():
    # a loop sum reordered by fori_loop: 40 ulp apart at 1e21, beyond the fixed 4 ulp and float32 rtol
    exact = np.asarray([1e21], np.float32)
    reordered = (exact.view(np.int32) + 40).view(np.float32)

    def tree(values: np.ndarray) -> FlatTree:
        return FlatTree("PyTreeDef(*)", ("",), (Leaf(values),))

    assert compare_trees(tree(exact), tree(reordered)).difference is not None
    assert compare_trees(tree(exact), tree(reordered), scale=reorder_scale(["JAX502"], {7: 100})).difference is None
    assert reorder_scale(["JAX201"], {7: 100}) == 1  # no loop reordered: the usual tolerance


def test_hang_limit_follows_the_originals_time():
    assert hang_limit(VersionResult(ok=True, wall=2.0), 150.0) == HANG_FLOOR
    assert hang_limit(VersionResult(ok=True, wall=20.0), 150.0) == 100.0
    assert hang_limit(VersionResult(ok=False, wall=2.0), 150.0) == 150.0


def test_the_footer_counts_sites_not_list_entries():
    from jaxfix.model import Evidence, Finding, Fix, Safety

    ev = Evidence("verified", "ok", {})
    one = Finding("JAX301", "n", "a.py", 3, 5, 3, 9, "m", Fix("t", Safety.SAFE, evidence=ev))
    assert report.summary([one, one]).startswith("Verified 1 of 1 fix;")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxfix.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


BRANCHY = """\
import jax
import jax.numpy as jnp


@jax.jit
def soft(x):
    if x > 1.0:
        return jnp.log(x)
    return x - 1.0
"""


def test_verify_an_edit_of_ones_own(tmp_path):
    (tmp_path / "branchy.py").write_text(BRANCHY)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=n"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=tmp_path, check=True)
    hand = "    return jnp.where(x > 1.0, jnp.log(jnp.where(x > 1.0, x, 1.0)), x - 1.0)\n"
    edited = BRANCHY.replace("    if x > 1.0:\n        return jnp.log(x)\n    return x - 1.0\n", hand)
    (tmp_path / "branchy.py").write_text(edited)
    done = _cli("verify", "--base", "HEAD", "branchy.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "soft (JAX301, against HEAD) verified" in done.stdout
    (tmp_path / "original.py").write_text(BRANCHY)
    (tmp_path / "branchy.py").write_text(edited.replace("x > 1.0, jnp.log", "x > 2.0, jnp.log"))
    done = _cli("verify", "--original", "original.py", "branchy.py", cwd=tmp_path)
    assert done.returncode == 1 and "mismatch" in done.stdout, done.stdout + done.stderr


SCRIPT = """\
import jax
import jax.numpy as jnp


@jax.jit
def soft(x):
    if x > 1.0:
        return jnp.log(x)
    return x - 1.0


if __name__ == "__main__":
    open("ran_main.txt", "w").write("yes")
    print(soft(jnp.float32(3.0)))
"""


def test_fix_verify_says_what_it_runs_and_no_run_main_skips_the_main_block(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    done = _cli("fix", "--verify", "--no-run-main", "script.py", cwd=tmp_path)
    assert not (tmp_path / "ran_main.txt").exists(), done.stderr
    assert "was not run (--no-run-main)" in done.stderr
    done = _cli("fix", "--verify", "script.py", cwd=tmp_path)
    announced = [line for line in done.stderr.splitlines() if "will run the original code" in line]
    assert announced and "__main__" in announced[0] and "time limit 180 s" in announced[0], done.stderr
    assert (tmp_path / "ran_main.txt").exists()


CRASHING_SCRIPT = """\
import jax
import jax.numpy as jnp


@jax.jit
def clip_step(x):
    if x > 1.0:
        return x / 2.0
    return x + 0.5


if __name__ == "__main__":
    x = jnp.float32(0.2)
    for _ in range(6):
        x = clip_step(x)
    print(x)
"""


def test_evidence_goes_beyond_the_first_crashing_call(tmp_path):
    # the original raises under jit on its first call (the bug being fixed): recorded as it runs,
    # the __main__ block would stop there with one call and one branch; the changed callable runs
    # eagerly while recording, so the loop goes on and both arms are reached
    path = tmp_path / "clipper.py"
    path.write_text(CRASHING_SCRIPT)
    source, fixed, findings = _fixed(path, "JAX301")
    verification = verify_change(source, fixed, str(path), findings=findings, device="cpu")
    evidence = verification.findings[0].fix.evidence
    assert evidence.verdict == "verified", evidence.detail
    assert evidence.input_source.startswith("__main__"), evidence.input_source
    assert evidence.data["inputs"] >= 5 and not evidence.data["weak"], evidence.detail
    assert "(both branches)" in evidence.detail, evidence.detail


def test_one_test_run_records_every_changed_file(tmp_path):
    # `fix --verify` over a project records the suite once for all changed files, not once per file
    from jaxfix.verify import suite
    from jaxfix.verify.recording import record_files

    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (tmp_path / "alpha.py").write_text("def double(x):\n    return x * 2\n")
    (tmp_path / "beta.py").write_text("def halve(x):\n    return x / 2\n")
    (tmp_path / "test_both.py").write_text(
        "from alpha import double\nfrom beta import halve\n\n\ndef test_both():\n"
        "    assert double(3) == 6\n    assert halve(double(5)) == 5\n"
    )
    watched = [
        {"path": str(tmp_path / "alpha.py"), "targets": {"double": "function"}, "module_name": "alpha"},
        {"path": str(tmp_path / "beta.py"), "targets": {"halve": "function"}, "module_name": "beta"},
    ]
    alpha, beta = record_files(
        suite.pytest_command(tmp_path, [tmp_path / "test_both.py"]), watched, cwd=str(tmp_path), source="pytest", timeout=120
    )
    assert alpha.returncode == 0, alpha.output_tail
    assert alpha.count("double") == 2 and not alpha.count("halve")
    assert beta.count("halve") == 1 and beta.module_name == "beta"


def test_record_cmd_runs_once_for_every_changed_file(tmp_path):
    # `fix --verify --record CMD` over several changed files runs CMD once, not once per file: on
    # stanford-crfm/levanter@9263f81 five changed files ran a 3-minute test command five times
    from jaxfix.model import FileResult
    from jaxfix.verify.api import verify_results

    (tmp_path / "alpha.py").write_text("def double(x):\n    return x * 2\n")
    (tmp_path / "beta.py").write_text("def halve(x):\n    return x / 2\n")
    (tmp_path / "test_both.py").write_text(
        "from alpha import double\nfrom beta import halve\n\n\ndef test_both():\n"
        "    open('runs.txt', 'a').write('run\\n')\n"
        "    assert double(3) == 6\n    assert halve(double(5)) == 5\n"
    )
    results = [
        FileResult(str(tmp_path / "alpha.py"), "def double(x):\n    return x * 2\n", fixed_source="def double(x):\n    return x + x\n"),
        FileResult(str(tmp_path / "beta.py"), "def halve(x):\n    return x / 2\n", fixed_source="def halve(x):\n    return x * 0.5\n"),
    ]
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider test_both.py"
    alpha, beta = verify_results(results, record_cmd=command, cwd=str(tmp_path), device="cpu", timeout=120, record_timeout=120)
    assert (tmp_path / "runs.txt").read_text() == "run\n"
    for verification, name in ((alpha, "double"), (beta, "halve")):
        assert any("one run for all changed files" in note for note in verification.notes), verification.notes
        unit = verification.unit(name)
        assert unit is not None and unit.evidence.verdict == "verified", unit and unit.evidence.detail
        assert unit.evidence.input_source.startswith("recorded"), unit.evidence.input_source


def test_addresses_in_text_outputs_are_not_compared():
    def text(value: str) -> FlatTree:
        return FlatTree("PyTreeDef(*)", ("",), (Leaf(value, kind="object"),))

    same = compare_trees(text("<Model object at 0x7f00aa>"), text("<Model object at 0x7f11bb>"))
    assert same.difference is None
    assert compare_trees(text("<Model object at 0x7f00aa>"), text("<Other object at 0x7f00aa>")).difference is not None


def test_each_fix_is_led_by_its_own_figure():
    # three fixes in one function share the unit's evidence; a timing fix and a re-wrap are not
    # "verified" by the compiles the jit hoist removed
    from jaxfix.model import Evidence, Finding, Fix, Safety
    from jaxfix.verify import payoff

    shared = Evidence(
        "verified", "5 compiles -> 0 (steady state)\nverified on 5 pytest inputs", headline="5 compiles -> 0 (steady state)",
        data={"compiles": [5, 0], "time_per_call": [2.06, 0.297], "timing": [{"reads": 10, "waited": 0}, {"reads": 10, "waited": 5}]},
    )

    def finding(code: str) -> Finding:
        return Finding(code, "n", "train.py", 3, 5, 3, 9, "m", Fix("t", Safety.SAFE, evidence=shared))

    timing = payoff.judge(finding("JAX501"), shared, "", 1)
    assert timing.verdict == "verified" and timing.headline.startswith("the timed region now includes the computation: 5 of 10")
    rewrap = payoff.judge(finding("JAX203"), shared, "", 1)
    assert rewrap.headline.startswith("the same function was re-wrapped (a cache hit): per call 2.06e+03 ms -> 297 ms")
    assert "compiles" not in rewrap.detail.splitlines()[0]


def test_a_fix_that_adds_a_parameter_is_judged_through_its_callers(tmp_path):
    # JAX503 passes the captured constant in: the original's recorded calls of `embed` cannot be
    # made on the rewrite (a missing argument was a false mismatch); `encode`, changed alike, answers
    program = ROOT / "benchmarks" / "verify_mutants_programs" / "constant_user" / "embed.py"
    path = tmp_path / "embed.py"
    path.write_text(program.read_text())
    source, fixed, findings = _fixed(path, "JAX503")
    assert "def embed(ids, scale, TABLE):" in fixed
    verification = verify_change(source, fixed, str(path), findings=findings, device="cpu")
    assert [f.fix.evidence.verdict for f in verification.findings] == ["verified"], verification.findings[0].fix.evidence.detail
    first = fixed.replace("def embed(ids, scale, TABLE):", "def embed(TABLE, ids, scale):")
    verification = verify_change(source, first, str(path), findings=findings, device="cpu")
    assert [f.fix.evidence.verdict for f in verification.findings] == ["mismatch"]


def test_a_cache_shown_unused_is_ineffective_even_beside_an_unverifiable_member():
    from jaxfix.model import Evidence, Finding, Fix, Safety
    from jaxfix.verify import payoff

    used = {"observed": {"original": {"jit_ops": 3}, "rewritten": {"jit_ops": 3, "filled_jit_ops": 3}}}
    combined = Evidence("unverifiable", "Model.total: no inputs", {"units": [used, {"why": "no inputs"}]})
    finding = Finding("JAX101", "n", "m.py", 3, 5, 3, 9, "m", Fix("t", Safety.UNSAFE, evidence=combined))
    assert payoff.judge(finding, combined, "", 0).verdict == "ineffective"
    assert payoff.judge(finding.with_fix(None), Evidence("unverifiable", "x", {"units": [{"why": "no inputs"}]}), "", 0).verdict == "unverifiable"


def test_every_mutant_of_the_mutation_benchmark_still_applies_to_the_generators():
    # benchmarks/verify_mutants.py edits the fix generators by exact text; a refactor of a generator
    # that drops that text stops the whole benchmark (as JAX501's fix signature change once did)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import verify_mutants
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    stale = [
        (m.name, (ROOT / m.path).read_text().count(m.old), m.count)
        for m in verify_mutants.MUTANTS
        if (ROOT / m.path).read_text().count(m.old) != m.count
    ]
    assert stale == []
    assert len(verify_mutants.MUTANTS) >= 15
