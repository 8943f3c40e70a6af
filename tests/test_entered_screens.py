"""The screens of the rules that follow calls see what other modules' traced code enters (issue
#21): a file whose functions a jitted function elsewhere calls is screened with those functions
entered (`trace_screen.screen_entries`), so it is libcst-parsed only when some screen admits it,
and every finding the rules report there is still reported.

Real two-module projects in temporary folders, real project indexes, the engine's own entry
point (`engine.analyze`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from screen_support import screen_misses

from jaxfix.analysis.cstparse import parse_module
from jaxfix.analysis.trace_screen import TraceScreen, trace_screen
from jaxfix.engine import analyze, fixing, registry
from jaxfix.engine.config import Config
from jaxfix.engine.project import build_project_index
from jaxfix.rulebase import RuleContext

CALLER = "import jax\n\nfrom pkg.model import clip\n\n\n@jax.jit\ndef step(x):\n    return clip(x)\n"

JNP = "import jax.numpy as jnp\n\n\n"

# (the called module, none naming a transform, the call in `step`, the finding): one per rule that
# follows calls, each reported only because `train.py`'s jitted `step` calls `clip`
REPORTED = {
    # conditions shown traced in the file itself (an array operation): a bare `if x > 0:` that only
    # the caller's module makes traced is not reported (`test_a_condition_only_the_caller_traces...`)
    "traced-if": (JNP + "def clip(x):\n    if jnp.sum(x) > 0:\n        return x\n    return -x\n", "clip(x)", ("JAX301", 5)),
    "print": ("def clip(x):\n    print(x)\n    return x\n", "clip(x)", ("JAX401", 2)),
    "numpy": ("import numpy as np\n\n\ndef clip(x):\n    return np.log(x)\n", "clip(x)", ("JAX402", 5)),
    "in-place": ("def clip(x):\n    x[0] = 1\n    return x\n", "clip(x)", ("JAX403", 2)),
    "outer-state": ("SEEN = []\n\n\ndef clip(x):\n    SEEN.append(x)\n    return x\n", "clip(x)", ("JAX404", 5)),
    "unrolled": ("def clip(x):\n    for i in range(1000):\n        x = x + i\n    return x\n", "clip(x)", ("JAX502", 2)),
    "constant": (
        "import numpy as np\n\nTABLE = np.ones((2000, 1000))\n\n\ndef clip(x):\n    return x + TABLE\n",
        "clip(x)",
        ("JAX503", 7),
    ),
    # a literal default a call elsewhere passes traced stays traced (`TraceScreen.static_params`)
    "passed-default": (
        JNP + "def clip(x, flag=True):\n    if jnp.any(flag):\n        return x\n    return -x\n",
        "clip(x, x > 0)",
        ("JAX301", 5),
    ),
    # "Cls.m": a method, entered with its arguments after `self`
    "method": (
        JNP + "class Scaler:\n    def clip(self, x):\n        if jnp.any(x > 0):\n            return x\n        return -x\n",
        "Scaler().clip(x)",
        ("JAX301", 6),
    ),
}

# entered, and nothing any rule reports: no screen admits the file, so it is never libcst-parsed
CLEAN = {
    "arithmetic": "def clip(x, k=2):\n    return x * k\n",
    "static-if": "def clip(x, flag=True):\n    if flag:\n        return x\n    return -x\n",  # `flag` never passed
    "shape-check": "def clip(x):\n    if x.ndim != 2:\n        raise ValueError(x.shape)\n    return x\n",
    "only-the-nested-def-named-so": (
        "def outer(y):\n    def clip(x):\n        if x > 0:\n            return x\n        return -x\n"
        "    return y\n\n\ndef clip(x):\n    return x * 2\n"
    ),
}


def _project(tmp_path: Path, model: str, call: str = "clip(x)") -> tuple[str, object]:
    caller = CALLER.replace("clip(x)\n", call + "\n")
    if call.startswith("Scaler"):
        caller = caller.replace("import clip", "import Scaler")
    for name, text in {"pkg/__init__.py": "", "pkg/model.py": model, "pkg/train.py": caller}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    paths = [str(p) for p in sorted((tmp_path / "pkg").glob("*.py"))]
    index = build_project_index(paths)
    assert index.cross_entries("pkg.model"), "the test project must enter `model`"
    return str(tmp_path / "pkg" / "model.py"), index


def _bypassed(source: str, path: str, index) -> list[tuple[str, int]]:
    """The findings of every rule with all screens bypassed (what the file holds)."""
    ctx = RuleContext(source, path, options=Config(preview=True).options(), project=index, tree=ast.parse(source))
    ctx.set_module(parse_module(source))
    rules = [r() for r in registry.all_rules() if not r.sees_findings]
    return sorted((f.code, f.line) for rule in rules for f in rule.check(ctx))


def _counting_parses(monkeypatch) -> list[int]:
    calls: list[int] = []
    original = fixing.parse_module

    def counted(source: str):
        calls.append(1)
        return original(source)

    monkeypatch.setattr(fixing, "parse_module", counted)
    return calls


@pytest.mark.parametrize("case", sorted(REPORTED))
def test_an_entered_function_is_still_reported(tmp_path, monkeypatch, case):
    model, call, expected = REPORTED[case]
    path, index = _project(tmp_path, model, call)
    parses = _counting_parses(monkeypatch)
    found = [(f.code, f.line) for f in analyze(model, path, Config(preview=True), project=index).findings]
    assert expected in found
    assert sorted(found) == _bypassed(model, path, index)
    assert parses  # some screen admitted the file
    assert screen_misses(model, path, project=index) == []
    # without the project nothing enters `clip`: the screens reject the file, rightly
    assert analyze(model, path, Config(preview=True)).findings == []


def test_a_condition_only_the_callers_module_makes_traced_is_not_reported(tmp_path):
    # issue #29: on code nobody tuned on, every `if` traced only through another module's caller
    # was wrong (levanter, scenic); the module does not show the value is an array
    model = "def clip(x):\n    if x > 0:\n        return x\n    return -x\n"
    path, index = _project(tmp_path, model, "clip(x)")
    assert analyze(model, path, Config(preview=True), project=index).findings == []


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_an_entered_file_nothing_is_reported_in_is_screened_out(tmp_path, monkeypatch, case):
    path, index = _project(tmp_path, CLEAN[case], "clip(x)")
    parses = _counting_parses(monkeypatch)
    assert analyze(CLEAN[case], path, Config(preview=True), project=index).findings == []
    assert parses == []  # no screen admitted it: no libcst parse
    assert _bypassed(CLEAN[case], path, index) == []  # the same findings as past the screens


def test_the_screen_enters_what_the_entries_name_and_nothing_else():
    tree = ast.parse(
        "def f(x, n=3):\n    return x\n\n\nclass A:\n    def m(self, y):\n        return y\n\n\n"
        "class B:\n    def m(self, y):\n        return y\n\n\ndef g(z):\n    def f(w):\n        return w\n    return z\n"
    )
    entries = frozenset({("f", frozenset({"x", "n", "gone"})), ("A.m", frozenset({"y"}))})
    # the module names no transform: its own screen (asked first, as `could_match` is) enters
    # nothing, and the screen with entries, made after it from what it collected, must still
    # find the defs the entries name
    alone = trace_screen(tree)
    assert not list(alone.traced_functions())
    screen = trace_screen(tree, entries=entries)
    traced = {(fn.class_name, fn.name): fn.traced_names for fn in screen.traced_functions()}
    assert traced == {(None, "f"): {"x", "n"}, ("A", "m"): {"y"}}
    assert {(fn.class_name, fn.name) for fn in TraceScreen(tree, entries=entries).traced_functions()} == set(traced)
    assert not any(fn.in_trace for fn in TraceScreen(tree).functions.values())
    # the memo keeps a screen per (packages, entries): the one without entries is another
    assert trace_screen(tree) is alone and trace_screen(tree, entries=entries) is screen
