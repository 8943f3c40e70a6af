"""`jaxfix explain` end to end: real user scripts run as child processes with real jax on CPU.

Each script exhibits one cause of recompilation; the test checks the counts, JAX's reason and the
finding joined to it (or "no rule matches"). Plus the commands explain must survive: not found,
failing, not using jax, running too long; and pytest as the command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from jaxfix.explain import explain as run_explain
from jaxfix.explain.events import argument_name, classify
from jaxfix.explain.render import render_json, render_text

ROOT = str(Path(__file__).resolve().parents[1])
PY = sys.executable

JIT_PLACEMENT = '''\
import functools

import jax
import jax.numpy as jnp


def body(x, n):
    return x * n


def run_partial(xs):
    total = 0.0
    for i in range(3):
        total = total + jax.jit(functools.partial(body, n=i))(xs).sum()
    return total


def scale(x, k):
    return jax.jit(lambda v: v * k)(x)


@jax.jit
def steady(x):
    return x + 1.0


xs = jnp.arange(3.0)
print("partial", run_partial(xs))
for k in range(4):
    scale(xs, float(k))
    steady(xs)
'''

# The pytree class and its equinox base live in other modules than the jitted function: JAX names
# the class, the monitor finds its file and its base's, and the join sees the cross-file base.
PYTREE_BASE = """\
import equinox as eqx


class Base(eqx.Module):
    pass
"""

PYTREE_MODEL = """\
import functools

import jax
import jax.numpy as jnp

from base import Base


class Model(Base):
    w: jax.Array

    @functools.cached_property
    def norm(self):
        return jnp.sqrt((self.w**2).sum())
"""

PYTREE = '''\
import jax
import jax.numpy as jnp

from model import Model


@jax.jit
def loss(model, x):
    return (model.w * x).sum() / model.norm


model = Model(jnp.arange(3.0))
x = jnp.ones(3)
loss(model, x)
model.norm  # fills the cache in the instance: equinox flattens it into the pytree metadata
loss(model, x)
'''

NO_RULE = '''\
import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames="n")
def power(x, n):
    if n > 0:  # a condition on a static argument: fine under jit, no JAX3 finding
        return x**n
    return jnp.ones_like(x)


@jax.jit
def mean(x):
    return x.mean()


x = jnp.arange(3.0)
for n in range(3):
    power(x, n=n)
for size in (2, 3, 4):
    mean(jnp.ones(size))
for _ in range(3):
    jax.lax.scan(lambda c, a: (c + a, c), 0.0, x)  # eager scan: compiles jit(scan) for a new body each time
'''


def explain(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real command line, in a subprocess."""
    env = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu")
    return subprocess.run(
        [PY, "-m", "jaxfix", "explain", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def explained(folder: Path, name: str, text: str):
    """Run one script once through the API (a real child process) and render both reports."""
    (folder / name).write_text(text, encoding="utf-8")
    result = run_explain([PY, name], cwd=str(folder))
    assert result.run.returncode == 0, result.run.problem
    cwd = str(folder)
    report = json.loads(render_json(result.run, result.collected, result.causes, cwd=cwd))
    text_report = render_text(result.run, result.collected, result.causes, cwd=cwd)
    every = render_text(result.run, result.collected, result.causes, cwd=cwd, show_all=True)
    return result, report, text_report, every


@pytest.fixture(scope="module")
def placement(tmp_path_factory):
    folder = tmp_path_factory.mktemp("placement")
    # The project turns JAX202 off: explain still names it, and says the config does not select it.
    (folder / "pyproject.toml").write_text('[tool.jaxfix]\nignore = ["JAX202"]\n', encoding="utf-8")
    return explained(folder, "placement.py", JIT_PLACEMENT)


def write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return name


def functions_by_name(report: dict) -> dict[str, dict]:
    return {f["name"]: f for f in report["functions"]}


def test_jit_placement_recompiles_join_jax201_and_jax202(placement):
    result, report, _, _ = placement
    assert result.exit_code == 1
    assert report["exit_status"] == 0 and report["used_jax"] and report["processes"] == 1
    functions = functions_by_name(report)
    assert set(functions) == {"body", "<lambda>", "steady"}  # eager ops are hidden
    assert report["hidden"]["functions"] >= 1 and report["hidden"]["compiles"] >= 1

    body = functions["body"]
    assert (body["path"], body["line"], body["traces"], body["compiles"]) == ("placement.py", 7, 3, 3)
    [cause] = body["recompiles"]
    assert (cause["line"], cause["function"], cause["count"], cause["kind"]) == (14, "run_partial", 2, "redefined")
    assert "re-defined repeatedly" in cause["reason"]
    assert [(f["code"], f["fix"], f["line"], f["selected"]) for f in cause["findings"]] == [("JAX201", "safe", 14, True)]

    lam = functions["<lambda>"]
    assert (lam["traces"], lam["compiles"]) == (4, 4)
    [cause] = lam["recompiles"]
    assert (cause["line"], cause["function"], cause["count"]) == (19, "scale", 3)
    assert [(f["code"], f["name"], f["fix"], f["selected"]) for f in cause["findings"]] == [
        ("JAX202", "jit-per-call", "safe", False)
    ]

    steady = functions["steady"]
    assert (steady["traces"], steady["compiles"], steady["recompiled"], steady["recompiles"]) == (1, 1, False, [])
    assert steady["compile_seconds"] > 0


def test_text_table_and_all_shows_eager_ops(placement):
    _, _, out, every = placement
    assert "exited with status 0" in out
    header = next(line for line in out.splitlines() if "defined at" in line)
    assert header.split() == ["function", "defined", "at", "traces", "compiles", "compile", "s"]
    row = next(line for line in out.splitlines() if line.strip().startswith("body "))
    assert row.split()[1:4] == ["placement.py:7", "3", "3"]
    assert "2× at placement.py:14:" in out and "in run_partial" in out
    assert "-> JAX201 jit-in-loop (fix: safe) at placement.py:14:" in out
    assert "-> JAX202 jit-per-call (fix: safe; not selected by your config) at placement.py:19:" in out
    assert "[library]" not in out and "--all shows them" in out
    assert "[library]" in every and "jax/_src/" in every  # --all: JAX's own eager ops too, never "recompiled"
    assert every.count("Recompilations:") == 1 and "[library]" not in every.split("Recompilations:")[1]


def test_pytree_metadata_change_joins_cached_property_finding_across_files(tmp_path):
    # `model.py` shows no instance read under a trace: JAX101 reports this equinox module only with
    # `unproven-pytrees` (the recompile below is the evidence, in another file)
    write(tmp_path, "pyproject.toml", "[tool.jaxfix.pytree-cache]\nunproven-pytrees = true\n")
    write(tmp_path, "base.py", PYTREE_BASE)
    write(tmp_path, "model.py", PYTREE_MODEL)
    _, report, _, _ = explained(tmp_path, "pytree.py", PYTREE)
    loss = functions_by_name(report)["loss"]
    assert (loss["traces"], loss["compiles"]) == (2, 2)
    [cause] = loss["recompiles"]
    assert (cause["path"], cause["line"], cause["kind"], cause["count"]) == ("pytree.py", 16, "pytree", 1)
    assert "`model`: Model pytree metadata" in cause["reason"]
    assert "different input pytree" in cause["jax_explanation"]
    assert [(f["code"], f["path"], f["line"], f["fix"]) for f in cause["findings"]] == [
        ("JAX101", "model.py", 12, "safe")  # the default (property) style's fix is safe
    ]


def test_static_argument_and_new_shapes_have_no_rule(tmp_path):
    result, report, text_report, _ = explained(tmp_path, "norule.py", NO_RULE)
    assert result.exit_code == 1
    functions = functions_by_name(report)
    [static] = functions["power"]["recompiles"]
    assert (static["kind"], static["count"], static["findings"]) == ("static", 2, [])
    assert static["reasons"] == ["static argument changed: `n` now 1, before 0", "static argument changed: `n` now 2, before 0"]
    [shapes] = functions["mean"]["recompiles"]
    assert (shapes["kind"], shapes["count"], shapes["findings"]) == ("types", 2, [])
    assert shapes["reason"] == "different input types: `x` now f32[3], before f32[2]"
    [body] = [f for f in report["functions"] if f["kind"] == "eager-body"]
    assert (body["name"], body["line"], body["traces"], body["compiles"]) == ("<lambda>", 25, 3, 3)
    assert [(c["kind"], c["count"], c["findings"]) for c in body["recompiles"]] == [("redefined", 2, [])]
    assert text_report.count("-> no rule matches; JAX's reason is above") == 3
    assert "<lambda> [eager-body]" in text_report


@pytest.mark.long  # pytest run by explain, in a test run by pytest
def test_pytest_as_the_command_and_clean_program_exits_zero(tmp_path):
    write(
        tmp_path,
        "test_clean.py",
        textwrap.dedent(
            """\
            import jax
            import jax.numpy as jnp


            @jax.jit
            def double(v):
                return v * 2.0


            def test_double():
                for _ in range(3):
                    assert float(double(jnp.ones(())) ) == 2.0
            """
        ),
    )
    done = explain(tmp_path, "--json", "--", PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_clean.py")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)  # pytest's own output went to stderr, not into the JSON
    assert report["version"] == 1 and report["command"][-1] == "test_clean.py" and report["exit_status"] == 0
    double = functions_by_name(report)["double"]
    assert (double["traces"], double["compiles"], double["recompiled"]) == (1, 1, False)
    assert "1 passed" in done.stderr


@pytest.mark.parametrize(
    ("argv", "code", "expected"),
    [
        ([PY, "-c", "import sys; print('hi'); sys.exit(3)"], 2, "exited with status 3"),
        ([PY, "-c", "print('no jax here')"], 0, "never imported jax"),
        ([PY, "-I", "-c", "import jax"], 0, "ignored PYTHONPATH (python -I or -E)"),
        (["true"], 0, "started no Python"),
    ],
)
def test_commands_that_fail_or_do_not_use_jax(tmp_path, argv, code, expected):
    result = run_explain(argv, cwd=str(tmp_path))
    assert result.exit_code == code
    assert expected in render_text(result.run, result.collected, result.causes)
    assert json.loads(render_json(result.run, result.collected, result.causes))["functions"] == []


def test_command_not_found_is_one_line(tmp_path):
    done = explain(tmp_path, "--", "no-such-command-xyz", "arg")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: command not found: no-such-command-xyz"
    assert "Traceback" not in done.stdout + done.stderr


def test_options_after_the_command_belong_to_the_command(tmp_path):
    done = explain(tmp_path, PY, "-c", "import sys; print('ARGS', sys.argv[1:])", "--json", "--all")
    assert done.returncode == 0, done.stderr
    assert "ARGS ['--json', '--all']" in done.stdout  # passed on, not taken by explain
    assert "never imported jax" in done.stdout


def test_timeout_stops_the_command_and_its_children(tmp_path):
    # The child starts a grandchild that would outlive it; the whole process group is stopped.
    code = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "open('grandchild.pid', 'w').write(str(p.pid)); time.sleep(60)"
    )
    result = run_explain([PY, "-c", code], cwd=str(tmp_path), timeout=2)
    assert result.exit_code == 2
    assert result.run.timed_out and result.run.problem.startswith("timed out after 2 s")
    assert result.run.seconds < 20
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    time.sleep(0.5)
    try:
        os.kill(grandchild, 0)
        state = Path(f"/proc/{grandchild}/stat").read_text().split()[2] if Path(f"/proc/{grandchild}").exists() else "gone"
    except ProcessLookupError:
        state = "gone"
    assert state in ("gone", "Z"), state  # killed (a zombie until its parent, also killed, is reaped)
    assert "timed out after 2 s" in render_text(result.run, result.collected, result.causes)


def test_a_shadowed_sitecustomize_still_runs(tmp_path):
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import os\nos.environ['OWN_SITE'] = 'ran'\n", encoding="utf-8")
    script = write(tmp_path, "show.py", "import os\nopen('seen.txt', 'w').write(os.environ.get('OWN_SITE', 'missing'))\n")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(own)
    try:
        result = run_explain([PY, script], cwd=str(tmp_path))
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    assert result.exit_code == 0
    assert (tmp_path / "seen.txt").read_text() == "ran"


def test_no_command_is_a_usage_error(tmp_path):
    done = explain(tmp_path)
    assert done.returncode == 2
    assert "no command given" in done.stderr


# -- JAX's explanation texts (as jax 0.10.2 writes them) -> kind and key line ----------------------

NEVER = """TRACING CACHE MISS at /t/s.py:24:19 (g):
  never seen function:
    body id=140629811983872 defined at /t/s.py:18
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?"""

STATIC = """TRACING CACHE MISS at /t/s.py:33:4 (<module>):
  for h defined at /t/s.py:27
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][1], now <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=2) and before <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=0), so the pytree node metadata does not match"""

TYPES = """TRACING CACHE MISS at /t/s.py:32:20 (<module>):
  for outer defined at /t/s.py:24
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[5] and before f32[3]"""


def test_classify_jax_explanations():
    assert classify(NEVER)[0] == "redefined" and "`body`" in classify(NEVER)[1]
    assert classify(STATIC, ["x", "n"]) == ("static", "static argument changed: `n` now 2, before 0")
    assert classify(STATIC) == ("static", "static argument changed: `positional argument 1` now 2, before 0")
    assert classify(TYPES) == ("types", "different input types: `x` now f32[5], before f32[3]")
    assert classify("TRACING CACHE MISS at a.py:1 (f):\n  for f\n  Debug info doesn't match.")[0] == "debug"
    assert argument_name("[1]['n']", None) == "n"
    assert argument_name("[0][0].w", ["model"]) == "model.w"


def _events(pid_line: int, *, user: bool = True) -> list[dict]:
    key = ["/p/a.py", pid_line, "f", 0]
    site = ["/p/a.py", 9, 4, "<module>"]
    return [
        {"k": "jax", "version": "0.10.2"},
        {"k": "miss", "key": key, "user": user, "for": "jit", "top": True, "site": site, "never_seen": True},
        {"k": "trace", "key": key, "user": user, "dur": 0.01},
        {"k": "compile", "key": key, "user": user, "dur": 0.5},
    ]


def test_one_trace_per_process_is_not_a_recompile():
    from jaxfix.explain.events import collect

    collected = collect({101: _events(3), 102: _events(3)})  # two xdist workers, each traced f once
    [f] = collected.functions
    assert (f.traces, f.compiles, len(f.pids), f.recompiled, collected.processes) == (2, 2, 2, False, 2)
    assert f.compile_seconds == 1.0


def test_a_second_trace_in_one_process_is_a_recompile_and_monitor_problems_are_kept():
    from jaxfix.explain.events import collect

    events = _events(3) + [
        {"k": "miss", "key": ["/p/a.py", 3, "f", 0], "user": True, "for": "jit", "top": True,
         "site": ["/p/a.py", 12, 0, "g"], "msg": TYPES},
        {"k": "compile", "key": ["/p/a.py", 3, "f", 0], "user": True, "dur": 0.25},
        {"k": "error", "where": "compile", "error": "KeyError: 'x'"},
        {"k": "truncated", "limit": 5},
    ]
    collected = collect({7: events})
    [f] = collected.functions
    assert (f.traces, f.compiles, f.recompiled) == (2, 2, True)
    [miss] = f.retraces
    assert (miss.kind, miss.site.line, miss.site.function, miss.nested) == ("types", 12, "g", False)
    assert collected.errors == ["monitor (compile): KeyError: 'x'"] and collected.truncated


def test_library_functions_never_count_as_recompiled():
    from jaxfix.explain.events import collect

    events = _events(101, user=False) + [{"k": "compile", "key": ["/p/a.py", 101, "f", 0], "user": False, "dur": 0.1}]
    [f] = collect({1: events}).functions
    assert (f.kind, f.compiles, f.recompiled, f.shown_by_default) == ("library", 2, False, False)


REWRAP = """\
import jax


def f(x, n):
    return x * n


def run(x, n):
    for i in range(3):
        x = jax.jit(f, static_argnums=1)(x, n)
    return x
"""


def test_join_offers_only_findings_whose_fix_removes_the_miss(tmp_path):
    from jaxfix.explain.events import Function, Miss, Site
    from jaxfix.explain.join import Joiner

    path = str(tmp_path / "rewrap.py")
    Path(path).write_text(REWRAP, encoding="utf-8")
    site = Site(path, 10, 12, "run")
    function = Function("f", path, 4, 0, True)
    function.retraces = [
        Miss(1, site, "static", "static argument changed: `n` now 1, before 0", "", False),
        Miss(1, site, "redefined", "never seen function `f`", "", False),
    ]
    static, redefined = Joiner().causes(function)
    # JAX203 (the same function re-wrapped in the loop) sits on the call line, but hoisting the jit
    # does not stop a static argument from changing: only a re-definition would be joined to it.
    assert static.first.kind == "static" and static.matches == []
    assert [m.finding.code for m in redefined.matches] == ["JAX203"]


NNX_PLACEMENT = '''\
from functools import partial

import jax.numpy as jnp
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(4, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear(x)


def loss_fn(model, x, y, scale):
    return scale * jnp.mean((model(x) - y) ** 2)


model = MLP(nnx.Rngs(0))
x, y = jnp.ones((8, 4)), jnp.zeros((8, 1))
for step in range(5):
    nnx.jit(partial(loss_fn, scale=1.0 + step))(model, x, y)
'''

EQX_PLACEMENT = '''\
from functools import partial

import equinox as eqx
import jax.numpy as jnp


def loss_fn(x, scale):
    return scale * jnp.mean(x ** 2)


x = jnp.ones((8, 4))
for step in range(4):
    eqx.filter_jit(partial(loss_fn, scale=1.0 + step))(x)
'''


def test_compiles_through_nnx_jit_are_charged_to_the_users_function(tmp_path):
    """Issue #30: explain said "No function of yours was traced or compiled more than once"
    although `loss_fn` compiled 5 times under `nnx.jit` (the compiles were charged to flax's
    internals, `JitWrapped.__call__`). Now: `loss_fn`, 5 compiles, the loop's line, JAX201."""
    result, report, text_report, _ = explained(tmp_path, "nnx_train.py", NNX_PLACEMENT)
    assert result.exit_code == 1
    loss = functions_by_name(report)["loss_fn"]
    assert (loss["path"], loss["line"], loss["traces"], loss["compiles"]) == ("nnx_train.py", 15, 5, 5)
    [cause] = loss["recompiles"]
    assert (cause["line"], cause["count"], cause["kind"]) == (22, 4, "redefined")
    assert [(f["code"], f["line"]) for f in cause["findings"]] == [("JAX201", 22)]
    assert "No function of yours" not in text_report


def test_compiles_through_eqx_filter_jit_are_charged_to_the_users_function(tmp_path):
    """equinox jits its own `fun_wrapped` and passes the user's partial as a static part: the
    compiles are `loss_fn`'s, the miss is a static argument, and the JAX201 at its call site fixes it."""
    result, report, _, _ = explained(tmp_path, "eqx_train.py", EQX_PLACEMENT)
    assert result.exit_code == 1
    loss = functions_by_name(report)["loss_fn"]
    assert (loss["path"], loss["line"], loss["traces"], loss["compiles"]) == ("eqx_train.py", 7, 4, 4)
    [cause] = loss["recompiles"]
    assert (cause["line"], cause["count"], cause["kind"]) == (13, 3, "static")
    assert [(f["code"], f["line"]) for f in cause["findings"]] == [("JAX201", 13)]


# JAX202 on a function called from a loop over written-out values is a preview finding (its
# evidence was mostly wrong on code nobody prepared: `codemods/jit_placement/preview.py`); the
# recompiles seen at run time are the evidence it lacked, so explain still joins it, marked
PREVIEW_PLACEMENT = '''\
import jax
import jax.numpy as jnp


def scale(x, k):
    return jax.jit(lambda v: v * k)(x)


xs = jnp.arange(3.0)
for k in (0.5, 1.0, 2.0):
    scale(xs, k)
'''


def test_a_preview_finding_joins_its_recompile_marked_as_preview(tmp_path):
    _, report, text_report, _ = explained(tmp_path, "listed.py", PREVIEW_PLACEMENT)
    [cause] = functions_by_name(report)["<lambda>"]["recompiles"]
    assert [(f["code"], f["line"], f["selected"], f["preview"], f["shown"]) for f in cause["findings"]] == [
        ("JAX202", 6, True, True, False)
    ]
    assert "-> JAX202 jit-per-call (fix: safe; shown by `check --preview`) at listed.py:6:" in text_report
