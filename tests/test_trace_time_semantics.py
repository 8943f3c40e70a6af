"""JAX401-JAX403 (codemods/trace_time_semantics/): findings, fixes, safety, and behaviour on real jax."""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import io
import logging
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fixture_cases import FIXTURES, discover_cases, load_as_module

from codemods import trace_time_semantics as tts
from codemods.trace_time_semantics import numpy_table
from codemods.trace_time_semantics.in_place_update_on_traced_array import (
    InPlaceUpdateRule,
)
from codemods.trace_time_semantics.numpy_on_traced_value import NumpyOnTracedValueRule
from codemods.trace_time_semantics.outer_state_mutation_in_traced_code import (
    OuterStateMutationRule,
)
from codemods.trace_time_semantics.print_in_traced_code import PrintInTracedCodeRule
from jaxfix.engine import analyze
from jaxfix.engine.config import Config

HEADER = "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax import lax\n\n\n"


def run(body: str, select: str = "JAX4", unsafe: bool = False):
    source = HEADER + textwrap.dedent(body)
    result = analyze(source, "case.py", Config(preview=True, select=(select,), unsafe_fixes=unsafe), fix=True)
    assert result.error is None, result.error
    fixed = result.fixed_source if result.fixed_source is not None else source
    return result.findings, fixed[len(HEADER) :] if fixed.startswith(HEADER) else fixed


def rows(findings):
    return [(f.code, f.fix.safety.value if f.fix else "none") for f in findings]


def load(tmp_path: Path, source: str, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return load_as_module(path)


def printed(fn, *args) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        jax.block_until_ready(fn(*args))
        jax.effects_barrier()
    return buffer.getvalue()


# -- metadata -----------------------------------------------------------------------------


def test_rules_and_commands():
    assert [r.codes[0].code for r in (PrintInTracedCodeRule, NumpyOnTracedValueRule, InPlaceUpdateRule)] == [
        "JAX401",
        "JAX402",
        "JAX403",
    ]
    for rule in (PrintInTracedCodeRule, NumpyOnTracedValueRule, InPlaceUpdateRule):
        # the originals cannot run under jit (or print a tracer there): compare with the eager original
        assert rule.verify_reference == "eager"
        for section in ("## What it does", "## Why is this bad?", "## Known problems", "## Fix safety", "## References"):
            assert section in rule.doc(), (rule.__name__, section)
    assert tts.PrintInTracedCodeCommand.__name__ == "PrintInTracedCodeCommand"
    assert tts.InPlaceUpdateCommand.DESCRIPTION.startswith("JAX403")


OLD_COMMANDS = {
    "PrintInTracedCodeCommand": ("print_in_traced_code", "JAX401"),
    "NumpyOnTracedValueCommand": ("numpy_on_traced_value", "JAX402"),
    "InPlaceUpdateCommand": ("in_place_update_on_traced_array", "JAX403"),
    "OuterStateMutationCommand": ("outer_state_mutation_in_traced_code", "JAX404"),
}


@pytest.mark.parametrize("name", sorted(OLD_COMMANDS))
def test_old_command_names_are_the_rule_modules_commands(name):
    """`trace_time_semantics.<Name>Command` (the single module's names before the split) is the
    rule module's own command, so libcst.tool's workers pickle it by reference as before."""
    module, code = OLD_COMMANDS[name]
    command = getattr(tts, name)
    assert command is getattr(importlib.import_module(f"codemods.trace_time_semantics.{module}"), name)
    assert command.DESCRIPTION.startswith(f"{code}: ")
    assert pickle.loads(pickle.dumps(command)) is command
    with pytest.raises(AttributeError):
        tts.TraceTimeSemanticsRule  # noqa: B018 - the package serves commands only


def test_libcst_tool_runs_an_old_command_name_like_jaxfix_fix(tmp_path):
    source = (FIXTURES / "trace_time_semantics" / "print_fstring.in.py").read_text()
    target = tmp_path / "code.py"
    target.write_text(source)
    repo = Path(__file__).resolve().parent.parent
    proc = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "--jobs=2", "trace_time_semantics.PrintInTracedCodeCommand", str(target)],
        cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, capture_output=True, text=True, timeout=300,
    )
    assert "Transformed 1 files successfully" in proc.stderr, proc.stderr
    assert target.read_text() == analyze(source, str(target), Config(preview=True, select=("JAX401",)), fix=True).fixed_source


# -- JAX401 -------------------------------------------------------------------------------


def test_print_fstring_becomes_format_string():
    findings, fixed = run(
        """
        @jax.jit
        def f(x, n):
            print(f"x={x:.2f} r={x!r} {x = } {{b}} n={n.shape}")
            return x
        """
    )
    assert rows(findings) == [("JAX401", "safe")]
    assert 'jax.debug.print("x={:.2f} r={!r} x = {!r} {{b}} n={}", x, x, x, str(n.shape))' in fixed


def test_print_sep_end_flush_fold_into_the_format():
    _, fixed = run(
        """
        @jax.jit
        def f(x):
            print("a", x, 3, None, sep="; ", end=" done\\n", flush=True)
            return x
        """
    )
    assert 'jax.debug.print("a; {}; 3; None done", x)' in fixed


@pytest.mark.parametrize(
    "call, reason",
    [
        ("print(x, file=sys.stderr)", "file="),
        ("print(x, end='')", "always ends the line"),
        ("print(x, sep=SEP)", "not a string literal"),
        ("print(*x)", "*args"),
        ('print(f"{x:{w}}")', "format spec holding an expression"),
        ('print("{", x)', "starts with `{`"),
    ],
)
def test_print_without_a_fix_is_manual(call, reason):
    findings, fixed = run(
        f"""
        import sys
        SEP = ","

        @jax.jit
        def f(x, w=5):
            {call}
            return x
        """
    )
    assert rows(findings) == [("JAX401", "manual")]
    assert reason in findings[0].fix.title
    assert call in fixed


def test_print_of_static_values_is_not_flagged():
    findings, _ = run(
        """
        @jax.jit
        def f(x):
            print(x.shape, x.dtype, len(x), "tracing")
            print(f"shape {x.shape}")
            return x

        def eager(x):
            print(x)
        """
    )
    assert findings == []


def test_print_rebound_is_not_the_builtin():
    findings, _ = run(
        """
        print = lambda *a: None

        @jax.jit
        def f(x):
            print(x)
            return x
        """
    )
    assert findings == []


def test_one_print_is_unordered_several_are_ordered():
    _, one = run("@jax.jit\ndef f(x):\n    print(x)\n    return x\n")
    assert 'jax.debug.print("{}", x)\n' in one
    _, two = run("@jax.jit\ndef f(x):\n    print(x)\n    print(x + 1)\n    return x\n")
    assert two.count("ordered=True") == 2


def test_print_rewrite_prints_values_on_every_call(tmp_path):
    source = HEADER + "@jax.jit\ndef f(x):\n    print(f'x={x[0]:.1f}', x.sum())\n    return x * 2\n"
    fixed = analyze(source, "case.py", Config(preview=True, select=("JAX401",)), fix=True).fixed_source
    original, rewritten = load(tmp_path, source, "print_orig"), load(tmp_path, fixed, "print_new")
    x = jnp.asarray([1.5, 2.0])
    # under jit the original cannot even format a tracer with a format spec
    with pytest.raises(TypeError, match="unsupported format string"):
        original.f(x)
    # the rewrite prints the values at every call, exactly what the eager original prints
    with jax.disable_jit():
        eager = printed(original.f, x)
    assert eager == "x=1.5 3.5\n"
    assert printed(rewritten.f, x) == eager
    assert printed(rewritten.f, x) == eager


def test_plain_print_of_a_tracer_prints_once(tmp_path):
    source = HEADER + "@jax.jit\ndef f(x):\n    print('x', x)\n    return x * 2\n"
    fixed = analyze(source, "case.py", Config(preview=True, select=("JAX401",)), fix=True).fixed_source
    original, rewritten = load(tmp_path, source, "print_orig2"), load(tmp_path, fixed, "print_new2")
    x = jnp.asarray([1.5, 2.0])
    assert "Tracer" in printed(original.f, x)  # the tracer, at trace time
    assert printed(original.f, x) == ""  # and nothing at the next call
    assert printed(rewritten.f, x) == printed(rewritten.f, x) == "x [1.5 2. ]\n"


# -- JAX402 -------------------------------------------------------------------------------


def test_numpy_calls_rewritten_by_the_table():
    findings, fixed = run(
        """
        @jax.jit
        def f(x, c):
            a = np.sin(x) + np.where(c > 0, x, 0.0) + np.clip(x, 0, 1) + np.linalg.norm(x)
            b = np.asarray(x, dtype=np.float32) + np.asarray(x, dtype="int32")
            return a + b + np.sum(x) + np.prod(x.shape) + np.pi + np.zeros(3)
        """
    )
    assert rows(findings) == [("JAX402", "safe")] * 6
    assert "jnp.sin(x) + jnp.where(c > 0, x, 0.0) + jnp.clip(x, 0, 1) + jnp.linalg.norm(x)" in fixed
    assert "np.sum(x) + np.prod(x.shape) + np.pi + np.zeros(3)" in fixed


def test_numpy_hazards_are_unsafe_and_shapes_manual():
    findings, fixed = run(
        """
        @jax.jit
        def f(x):
            a = np.asarray(x, dtype=np.float64)
            b = np.argsort(x)
            c = np.unique(x)
            d = np.where(x > 0)
            return a, b, c, d
        """
    )
    assert rows(findings) == [("JAX402", "unsafe"), ("JAX402", "unsafe"), ("JAX402", "manual"), ("JAX402", "manual")]
    assert "64-bit" in findings[0].fix.title and "stable" in findings[1].fix.title
    assert "size=" in findings[2].fix.title and "size=" in findings[3].fix.title
    _, unsafe = run(
        "@jax.jit\ndef f(x):\n    return np.argsort(x)\n", unsafe=True
    )
    assert "jnp.argsort(x)" in unsafe


def test_numpy_import_added_when_missing():
    source = "from jax import jit\nimport numpy as onp\n\n\n@jit\ndef f(x):\n    return onp.cos(x)\n"
    fixed = analyze(source, "case.py", Config(preview=True, select=("JAX402",)), fix=True).fixed_source
    assert "import jax.numpy as jnp" in fixed and "return jnp.cos(x)" in fixed


@pytest.mark.parametrize("name", ["sin", "where", "asarray", "clip", "concatenate", "argsort"])
def test_measured_failing_numpy_functions_fail_on_a_tracer(name):
    fn = getattr(np, name)
    args = {"where": lambda x: (x > 0, x, 0.0), "concatenate": lambda x: ([x, x],), "clip": lambda x: (x, 0, 1)}
    make = args.get(name, lambda x: (x,))
    with pytest.raises((jax.errors.TracerArrayConversionError, TypeError)):
        jax.jit(lambda x: fn(*make(x)))(jnp.arange(3.0))
    assert name in numpy_table.NP_SAME or name in numpy_table.NP_DIFFERENT


@pytest.mark.parametrize("name", ["sum", "mean", "max", "round", "reshape", "flip"])
def test_measured_working_numpy_functions_work_on_a_tracer(name):
    fn = getattr(np, name)
    extra = {"reshape": ((3, 1),)}.get(name, ())
    out = jax.jit(lambda x: fn(x, *extra))(jnp.arange(3.0))
    assert isinstance(out, jax.Array)
    assert name in numpy_table.NP_WORKS


# -- JAX403 -------------------------------------------------------------------------------


def test_item_updates_become_at_updates():
    findings, fixed = run(
        """
        @jax.jit
        def f(x, v):
            x = x * 2
            x[0] = v
            x[1] += v
            x[1:] -= 1.0
            x[2] *= 3
            x[0] **= 2
            x[1] //= 2; x[2] %= 4
            return x
        """
    )
    assert rows(findings) == [("JAX403", "safe")] * 7
    for line in (
        "x = x.at[0].set(v)",
        "x = x.at[1].add(v)",
        "x = x.at[1:].subtract(1.0)",
        "x = x.at[2].multiply(3)",
        "x = x.at[0].power(2)",
        "x = x.at[1].set(x[1] // 2); x = x.at[2].set(x[2] % 4)",
    ):
        assert line in fixed


def test_traced_index_alias_and_divide_are_unsafe():
    findings, _ = run(
        """
        @jax.jit
        def f(x, i, v):
            x = x + 0
            x[i] += v
            x[0] /= 2.0
            y = x
            y[1] = v
            return x, y
        """
    )
    assert rows(findings) == [("JAX403", "unsafe")] * 3
    assert "repeated indices" in findings[0].fix.title
    assert "integer" in findings[1].fix.title
    assert "aliases" in findings[2].fix.title


def test_containers_numpy_and_functional_updates_are_not_flagged():
    findings, _ = run(
        """
        @jax.jit
        def f(x, params, names: list):
            out = []
            out.append(x)
            out[0] = x
            d = {"a": x}
            d["a"] = x * 2
            params["w"] = x
            names[0] = x
            buf = np.zeros(3)
            buf[0] = 1.0
            x = x.at[0].set(1.0)
            return out, d, params, names, buf, x
        """
    )
    assert findings == []


def test_unread_nested_and_attribute_targets_are_manual():
    findings, fixed = run(
        """
        @jax.jit
        def lost(x, v):
            x = x * 1.0
            x[0] = v

        @jax.jit
        def nested(m, v):
            m = m + 0.0
            m[0][1] = v
            return m
        """
    )
    assert rows(findings) == [("JAX403", "manual"), ("JAX403", "manual")]
    assert "not read after" in findings[0].fix.title and "nested" in findings[1].fix.title
    assert "x[0] = v" in fixed and "m[0][1] = v" in fixed


def test_update_in_a_loop_counts_as_read():
    findings, fixed = run(
        """
        @jax.jit
        def f(x):
            out = jnp.zeros(3)
            for k in range(3):
                out[k] = x[k] * 2
            return out
        """
    )
    assert rows(findings) == [("JAX403", "safe")]
    assert "out = out.at[k].set(x[k] * 2)" in fixed


def test_an_item_store_into_the_list_split_returns_is_no_array_update():
    """dakling/jax-spectral-dns@f35469e jax_spectral_dns/navier_stokes.py:1605 (heldout18, wrong,
    with a safe `.at[i].set` fix that broke the code): `jnp.split` returns a Python list, and
    `fields_2d[i] = ...` replaces an element. The same store into a reshaped array is the bug."""
    findings, fixed = run(
        """
        @jax.jit
        def f(state):
            fields_2d = jnp.split(state, 2, axis=0)
            for i in range(len(fields_2d)):
                fields_2d[i] = jnp.reshape(fields_2d[i], (2, 2)).T
            return jnp.concatenate(fields_2d)


        @jax.jit
        def g(state):
            fields_2d = jnp.reshape(state, (2, 4))
            fields_2d[0] = 1.0
            return fields_2d
        """
    )
    assert rows(findings) == [("JAX403", "safe")]
    assert "fields_2d = fields_2d.at[0].set(1.0)" in fixed and "fields_2d[i] = jnp.reshape" in fixed


def test_squares_fixture_rewrite_matches_numpy(tmp_path):
    """`squares` builds a JAX array, so its original raises on every input: its rewrite is checked
    against the NumPy meaning of the code here (the fixture's drive can only record the repair)."""
    folder = FIXTURES / "trace_time_semantics"
    original = load(tmp_path, (folder / "at_updates.in.py").read_text(), "at_orig")
    rewritten = load(tmp_path, (folder / "at_updates.out.py").read_text(), "at_new")
    xs = np.asarray([1.0, -2.0, 3.0], dtype=np.float32)
    with pytest.raises(TypeError, match="immutable"):
        original.squares(jnp.asarray(xs))
    expected = np.zeros(3)
    for k in range(3):
        expected[k] = xs[k] ** 2
    np.testing.assert_allclose(rewritten.squares(jnp.asarray(xs)), expected)
    grad = jax.grad(lambda v: rewritten.bump(v, 5.0).sum())(jnp.asarray([1.0, 2.0, 3.0, 4.0]))
    # bump: x*2, x[1] overwritten, x[1:3] doubled, x[2] squared, x[-1] minus v
    np.testing.assert_allclose(grad, [2.0, 0.0, 32 * 3.0, 2.0])  # d/dx (4x)^2 = 32x


# -- could_match never rejects a real match --------------------------------------------------


@pytest.mark.parametrize(
    "case", [c for c in discover_cases() if c.positive], ids=lambda c: c.id
)
def test_could_match_admits_every_file_with_a_finding(case):
    source = case.input.read_text(encoding="utf-8")
    findings = analyze(source, str(case.input), Config(preview=True, select=("JAX401", "JAX402", "JAX403")), fix=False).findings
    codes = {f.code for f in findings}
    tree = ast.parse(source)
    for rule in (PrintInTracedCodeRule(), NumpyOnTracedValueRule(), InPlaceUpdateRule()):
        if rule.codes[0].code in codes:
            assert any(token in source for token in rule.prefilter)
            assert rule.could_match(tree)


def test_could_match_rejects_untraced_modules():
    tree = ast.parse("import numpy as np\n\ndef f(x):\n    x[0] = 1\n    print(np.sin(x))\n")
    for rule in (PrintInTracedCodeRule(), NumpyOnTracedValueRule(), InPlaceUpdateRule()):
        assert not rule.could_match(tree)


NUMPY_INDEXING = {
    # (text, whether JAX402 reports): a traced index into a name is reported only for a NumPy array
    # the module or the function makes (`np.<maker>(...)`); the screen looks for that binding
    "module_table": ("import jax\nimport numpy as np\nT = np.arange(4)\n\n@jax.jit\ndef f(i):\n    return T[i]\n", True),
    "annotated_module_table": (
        "import jax\nimport numpy as np\nT: np.ndarray = np.arange(4)\n\n@jax.jit\ndef f(i):\n    return T[i]\n", True
    ),
    "local_array": ("import jax\nimport numpy as np\n\n@jax.jit\ndef f(i):\n    t = np.zeros(3)\n    return t[i]\n", True),
    "maker_call": ("import jax\nimport numpy as np\n\n@jax.jit\ndef f(i):\n    return np.arange(3)[i]\n", True),
    # jax's pallas kernels: refs and parameters indexed with traced values, numpy imported
    "ref_or_parameter": (
        "import jax\nimport numpy as np\nimport jax.numpy as jnp\nSCALE = np.float32(2)\n\n@jax.jit\n"
        "def f(ref, i):\n    block = ref[i]\n    rows = jnp.arange(3)\n    return block * rows[i] * np.sqrt(2) * SCALE\n",
        False,
    ),
    "not_a_maker": ("import jax\nimport numpy as np\n\n@jax.jit\ndef f(x, i):\n    return np.asarray_chkfinite(x)[i]\n", False),
}


@pytest.mark.parametrize("name", sorted(NUMPY_INDEXING))
def test_numpy_index_screen_admits_reported_tables_and_rejects_other_subscripts(name):
    source, reported = NUMPY_INDEXING[name]
    found = analyze(source, "m.py", Config(preview=True, select=("JAX402",))).findings
    assert bool(found) == reported, found
    assert NumpyOnTracedValueRule().could_match(ast.parse(source)) == reported


ITEM_STORES = {
    # (text, whether JAX403 reports): the screen leaves out stores into names the function binds to
    # a container or a NumPy value, or uses as a container (`ArrayEvidence` says: no array)
    "jnp_array": ("import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    y = jnp.zeros(3) + x\n    y[0] = 1.0\n    return y\n", True),
    "traced_parameter": ("import jax\n\n@jax.jit\ndef f(x):\n    x[0] = 1.0\n    return x\n", True),
    "list_display": (
        "import jax\n\n@jax.jit\ndef f(x):\n    parts = [x, x]\n    parts[0] = x * 2\n    return parts[0] + parts[1]\n", False
    ),
    "unpacked_from_a_tuple": (
        "import jax\n\n@jax.jit\ndef f(x):\n    a, b = ([x], [x])\n    a[0] = x * 2\n    return a[0] + b[0]\n", False
    ),
    "dict_call": ("import jax\n\n@jax.jit\ndef f(x):\n    d = dict()\n    d[0] = x\n    return d[0]\n", False),
    "numpy_buffer": (
        "import jax\nimport numpy as np\n\n@jax.jit\ndef f(x):\n    buf = np.zeros(3)\n    buf[0] = 1.0\n    return x + buf.sum()\n", False
    ),
    "container_method": (
        "import jax\n\n@jax.jit\ndef f(x, acc):\n    acc.append(x)\n    acc[0] = x\n    return acc\n", False
    ),
    "container_in_a_nested_def_only": (
        "import jax\n\n@jax.jit\ndef f(x):\n    def g(x):\n        x = [x]\n        return x\n    x[0] = 1.0\n    return g(x)\n", True
    ),
}


@pytest.mark.parametrize("name", sorted(ITEM_STORES))
def test_item_store_screen_leaves_out_containers(name):
    source, reported = ITEM_STORES[name]
    found = analyze(source, "m.py", Config(preview=True, select=("JAX403",))).findings
    assert bool(found) == reported, found
    assert InPlaceUpdateRule().could_match(ast.parse(source)) == reported


# -- JAX404 -------------------------------------------------------------------------------


def test_outer_state_findings_are_manual():
    findings, fixed = run(
        """
        SCALE = 2.0
        seen = []
        cache = {}
        count = 0

        @jax.jit
        def f(x):
            global count
            count += 1
            seen.append(x)
            cache["k"] = x
            own = []
            own.append(x)
            return x * SCALE

        def set_scale(v):
            global SCALE
            SCALE = v

        def sweep(x, scales):
            for v in scales:
                f(x)
                set_scale(v)  # after a trace of `f`: the compiled `f` keeps the old SCALE

        def outer(xs):
            acc = []

            def body(c, x):
                acc.append(x)
                return c + x, None

            return lax.scan(body, 0.0, xs), acc
        """,
        select="JAX404",
    )
    assert rows(findings) == [("JAX404", "manual")] * 5
    messages = " | ".join(f.message for f in findings)
    for text in ("global `count`", "`seen.append(...)`", 'cache["k"]', "module-level `SCALE`", "`acc.append(...)`"):
        assert text in messages
    assert "own.append" not in messages
    assert "global count" in fixed  # nothing rewritten


LAMBDA_MUTATIONS = {
    # (text, whether JAX404 reports): a mutator call in a traced lambda on a name of an enclosing
    # function reports only when that function binds it to a container (optax's tests:
    # `lax.cond(c, lambda: opt.update(...), ...)` with `opt` an optimizer made in the test)
    "enclosing_container": (
        "import jax\n\ndef outer(x):\n    log = []\n    return jax.lax.cond(x > 0, lambda: log.append(x), lambda: None)\n",
        True,
    ),
    "enclosing_object_in_a_with_block": (
        "import contextlib\nimport jax\n\ndef outer(make, x):\n    with contextlib.nullcontext():\n        opt = make()\n"
        "    return jax.lax.cond(x > 0, lambda: opt.update(x), lambda: None)\n",
        False,
    ),
    "enclosing_parameter": (
        "import jax\n\ndef outer(opt, x):\n    return jax.lax.cond(x > 0, lambda: opt.update(x), lambda: None)\n", False
    ),
    "module_container": (
        "import jax\n\nSEEN = {}\n\ndef outer(x):\n    return jax.lax.cond(x > 0, lambda: SEEN.update(a=x), lambda: None)\n", True
    ),
    "module_object": (
        "import jax\n\nopt = object()\n\ndef outer(x):\n    return jax.lax.cond(x > 0, lambda: opt.update(x), lambda: None)\n",
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(LAMBDA_MUTATIONS))
def test_outer_state_screen_follows_a_lambdas_enclosing_functions(name):
    source, reported = LAMBDA_MUTATIONS[name]
    found = analyze(source, "m.py", Config(preview=True, select=("JAX404",))).findings
    assert bool(found) == reported, found
    assert OuterStateMutationRule().could_match(ast.parse(source)) == reported


def test_outer_state_negatives():
    findings, _ = run(
        """
        LIMIT = 3.0

        @jax.jit
        def f(x, params):
            out = []
            out.append(x * LIMIT)
            params["w"] = x
            return out, params

        def untraced(v):
            global LIMIT
            LIMIT = v

        untraced(4.0)  # import-time setup, before any trace
        """,
        select="JAX404",
    )
    # LIMIT is rebound only at import, before anything traces `f`: the order says no stale read
    assert findings == []


def test_outer_state_read_after_setter_between_calls():
    findings, _ = run(
        """
        LIMIT = 3.0

        @jax.jit
        def f(x):
            return x * LIMIT

        def untraced(v):
            global LIMIT
            LIMIT = v

        untraced(4.0)
        y = f(1.0)
        untraced(5.0)  # after the trace: `f` keeps 4.0
        """,
        select="JAX404",
    )
    assert [f.code for f in findings] == ["JAX404"]
    assert "LIMIT" in findings[0].message


def test_a_lambda_jitted_and_called_where_it_is_made_reads_nothing_stale():
    # the same notebook's cell 25: `variables = jax.jit(lambda: model.init(..., batch[...]),
    # backend='cpu')()`; `batch` is rebound by the training loop of a later cell, which calls
    # other compiled functions: nothing can call that lambda's compilation again
    notebook = """
        batch = 1.0

        variables = jax.jit(lambda: batch * 2.0)()

        @jax.jit
        def step(x):
            return x + 1.0

        for batch in (2.0, 3.0):
            step(batch)
        """
    findings, _ = run(notebook, select="JAX404")
    assert findings == []
    # buggy: the compiled lambda is kept and called in the loop after each rebinding
    kept = notebook.replace("variables = jax.jit(lambda: batch * 2.0)()", "double = jax.jit(lambda: batch * 2.0)")
    kept = kept.replace("step(batch)", "step(double())")
    findings, _ = run(kept, select="JAX404")
    assert [f.code for f in findings] == ["JAX404"] and "`batch`" in findings[0].message


RUNTIME_CACHE = """
_CACHE = {}
_REGISTRY = {}
_DEFAULTS = {"scale": 2.0}


def set_step_size(value):
    _CACHE.clear()
    _CACHE["step_size"] = value


def register(name):
    def wrap(fn):
        _REGISTRY[name] = fn  # a decorator's wrapper: runs at import
        return fn

    return wrap


def add_default(name, value):
    _DEFAULTS[name] = value  # called at module level only: import time


@register("sine")
def sine(x):
    return jnp.sin(x)


add_default("shift", 1.0)


@jax.jit
def leapfrog(q, p):
    eps = _CACHE["step_size"]
    return _REGISTRY["sine"](q + eps * p) * _DEFAULTS["scale"]


def run_chain(q, p, step_sizes):
    for eps in step_sizes:
        set_step_size(eps)
        q = leapfrog(q, p)
    return q
"""


def test_a_module_container_changed_at_run_time_and_read_under_jit(tmp_path):
    """numpyro issue 2000: `_CACHE` is cleared and refilled by `set_step_size`, which `run_chain`
    calls between runs; `leapfrog` reads it once, at trace time. Registries filled at import
    (by a decorator's wrapper, or by a module-level call) are not reported."""
    findings, _ = run(RUNTIME_CACHE, select="JAX404")
    assert [(f.code, f.line) for f in findings] == [("JAX404", 40)]  # run() adds a header
    assert "`_CACHE` is changed at run time (`set_step_size`" in findings[0].message
    mod = load(tmp_path, "import jax\nimport jax.numpy as jnp\n" + textwrap.dedent(RUNTIME_CACHE), "runtime_cache")
    q, p = jnp.ones(2), jnp.ones(2)
    mod.set_step_size(0.1)
    first = mod.leapfrog(q, p)
    mod.set_step_size(0.5)
    np.testing.assert_allclose(mod.leapfrog(q, p), first)  # the new step size is not seen


def test_outer_state_fixture_shows_trace_time_behaviour(tmp_path):
    folder = FIXTURES / "trace_time_semantics"
    mod = load(tmp_path, (folder / "outer_state.in.py").read_text(), "outer_state_case")
    x = jnp.asarray([1.0, 2.0])
    first = mod.f(x)
    mod.f(x + 1.0)
    mod.set_scale(3.0)
    np.testing.assert_allclose(mod.f(x), first)  # the read of SCALE is frozen at trace time
    assert len(mod.seen) == 1 and mod.trace_count == 1  # the side effects ran once, when traced
    _, collected = mod.outer(jnp.asarray([1.0, 2.0, 3.0]))
    assert len(collected) == 1  # the scan body was traced once for three iterations


def test_update_read_only_by_itself_is_manual():
    findings, _ = run(
        """
        @jax.jit
        def f(x):
            x = x * 1.0
            x[0] = x[1]  # the value reads x, but nothing reads the update
        """
    )
    assert rows(findings) == [("JAX403", "manual")]


def test_logging_a_traced_value_is_reported_like_print():
    """CoVO-MPC issue 2: `logging.info(total_loss_mean)` inside traced code logs a tracer, once.
    Module-level loggers count; static values, a local named like a logger and untraced code do not."""
    findings, fixed = run(
        """
        import logging

        logger = logging.getLogger(__name__)

        @jax.jit
        def update(params, batch):
            loss = jnp.mean((batch - params) ** 2)
            logging.info(loss)
            logger.warning("loss %s", loss)
            logger.info("shape %s", batch.shape)
            return params - loss

        @jax.jit
        def local(x, log):
            log.info(x)  # a parameter: whatever it is, not this module's logger
            return x

        def eager(x):
            logging.info(x)
        """,
        select="JAX401",
    )
    assert [(f.line, f.code, f.fix.safety.value) for f in findings] == [(15, "JAX401", "manual"), (16, "JAX401", "manual")]
    assert "`logging.info` of a traced value" in findings[0].message and "`logger.warning`" in findings[1].message
    assert "jax.debug.callback" in findings[0].fix.title
    assert "logging.info(loss)" in fixed  # nothing rewritten


def test_a_numpy_array_indexed_by_a_traced_value():
    """jax issue 553: `np.arange(x.shape[0])[x]` under jit; also a module-level NumPy table and a
    local NumPy array indexed by a traced index. Static indices, JAX arrays, and a table rebound
    elsewhere are not reported."""
    findings, _ = run(
        """
        import numpy as np

        TABLE = np.array([1.0, 2.0, 3.0])
        OTHER = np.array([1.0, 2.0])
        OTHER = jnp.asarray(OTHER)

        @jax.jit
        def f(x, i):
            a = np.arange(x.shape[0])[x]
            b = TABLE[i]
            local = np.zeros(3)
            c = local[i:]
            d = TABLE[0] + local[1] + jnp.arange(3)[i] + OTHER[i]
            return a, b, c, d
        """,
        select="JAX402",
    )
    assert [(f.line, f.fix.safety.value) for f in findings] == [(16, "unsafe"), (17, "manual"), (19, "manual")]


def test_a_traced_value_stored_on_a_module_level_plain_object():
    """numpyro PR 1976: a guide object, built at module level, caches on `self` inside
    `__call__`, which a jitted lambda calls: the tracer stays on the object. An object built inside
    the trace, a pytree, a static value and `__init__` are not reported."""
    findings, _ = run(
        """
        class Guide:
            def __init__(self, size):
                self.size = size
                self.plates = {}
                self.calls = 0

            def _setup(self, key):
                self.plates["n"] = jax.random.permutation(key, jnp.arange(self.size))
                self.calls += 1
                self.history = [key]

            def __call__(self, key):
                self._setup(key)
                return self.plates["n"] * 2

        class Layer:
            def place(self, r):
                self.sigma = r * 2.0
                return self

        guide = Guide(2)
        out = jax.jit(lambda k: guide(k))(jax.random.PRNGKey(0))

        @jax.jit
        def simulate(r):
            return Layer().place(r).sigma
        """,
        select="JAX404",
    )
    assert [(f.line, f.code) for f in findings] == [(15, "JAX404"), (17, "JAX404")]  # not `self.calls += 1`
    assert '`self.plates["n"]` stores a traced value on a `Guide` object' in findings[0].message


def test_a_registry_filled_by_one_off_setup_code_is_not_run_time_state():
    findings, _ = run(
        """
        _KERNELS = {}

        def register(name, fn):
            _KERNELS[name] = fn

        def setup():
            register("sin", jnp.sin)  # one-off setup, not a loop: a registry

        setup()

        @jax.jit
        def apply(x):
            return _KERNELS["sin"](x)
        """,
        select="JAX404",
    )
    assert findings == []


# -- item stores into a `jax.numpy` array in code nothing traces (eager_arrays) ---------------


def test_eager_fixture_rewrite_matches_numpy(tmp_path):
    """The EasyDeL case (fixtures/trace_time_semantics/eager_at.in.py): the original raises on
    every input; the rewrite returns what the same code computes on a NumPy array."""
    folder = FIXTURES / "trace_time_semantics"
    original = load(tmp_path, (folder / "eager_at.in.py").read_text(), "eager_orig")
    rewritten = load(tmp_path, (folder / "eager_at.out.py").read_text(), "eager_new")
    with pytest.raises(TypeError, match="immutable"):
        original.create_sinusoidal_positions(4, 6)
    inv_freq = 1.0 / (10000 ** (np.arange(0, 6, 2) / 6))
    inp = np.einsum("i , j -> i j", np.arange(4), inv_freq).astype("float32")
    expected = np.zeros((4, 6))
    expected[:, :3] = np.sin(inp)
    expected[:, 3:] = np.cos(inp)
    np.testing.assert_allclose(rewritten.create_sinusoidal_positions(4, 6), expected, rtol=1e-6)


def test_eager_augmented_store_on_an_index_name_is_unsafe():
    findings, fixed = run(
        """
        def counts(labels, n):
            hist = jnp.zeros(n)
            for k in labels:
                hist[k] += 1.0
            hist[0] = 2.0
            return hist
        """,
        unsafe=True,
    )
    assert rows(findings) == [("JAX403", "unsafe"), ("JAX403", "safe")]
    assert "hist = hist.at[k].add(1.0)" in fixed and "hist = hist.at[0].set(2.0)" in fixed


def test_eager_store_is_screened_and_negatives_stay_silent():
    """The screen admits the eager store (no transform in the file); a NumPy array, a parameter,
    a name rebound to NumPy on one path, containers and functional updates are not reported
    (fixtures/trace_time_semantics/eager_at_ok.ok.py, run by test_fixtures too)."""
    source = "import jax.numpy as jnp\n\ndef f(n):\n    out = jnp.ones(n)\n    out[0] = 1.0\n    return out\n"
    assert InPlaceUpdateRule().could_match(ast.parse(source))
    assert rows(analyze(source, "m.py", Config(preview=True, select=("JAX403",))).findings) == [("JAX403", "safe")]
    ok = (FIXTURES / "trace_time_semantics" / "eager_at_ok.ok.py").read_text()
    assert not InPlaceUpdateRule().could_match(ast.parse(ok))
    assert analyze(ok, "ok.py", Config(preview=True, select=("JAX403",))).findings == []


# kmheckel/spyx@38374e96962ce4bae44a902e78520c0657b6bd86:research/pallas/aot.ipynb (cells 16-18): a
# Pallas kernel writes its output through a mutable Ref; `o_ref[...] = value` is the Pallas way,
# not an in-place update of a traced array. The kernel here is run in interpret mode (CPU).
PALLAS_KERNEL = """
from jax.experimental import pallas as pl


@jax.jit
def superspike_kernel(x_ref, o_ref):
    x = x_ref[...]
    o_ref[...] = 1 / (1 + 25 * jnp.abs(x)) ** 2


@jax.jit
def pallas_superspike(x):
    return pl.pallas_call(
        superspike_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        interpret=True,
    )(x)
"""


def test_a_pallas_kernel_writing_its_output_ref_is_not_reported(tmp_path):
    findings, _ = run(PALLAS_KERNEL, "JAX403")
    assert findings == []
    module = load(tmp_path, HEADER + PALLAS_KERNEL, "pallas_kernel")
    x = jnp.arange(4.0)
    np.testing.assert_allclose(module.pallas_superspike(x), 1 / (1 + 25 * jnp.abs(x)) ** 2, rtol=1e-6)


def test_the_same_store_in_a_plain_jitted_function_is_still_reported():
    # the buggy twin: the same body jitted on arrays, never handed to `pallas_call`
    twin = PALLAS_KERNEL.replace("superspike_kernel,", "lambda x_ref, o_ref: None,")
    twin += "\n\nout = superspike_kernel(jnp.ones(3), jnp.zeros(3))\n"
    findings, _ = run(twin, "JAX403")
    assert rows(findings) == [("JAX403", "manual")]
    with pytest.raises(TypeError):
        jax.jit(lambda x, o: o.__setitem__(Ellipsis, x))(jnp.ones(3), jnp.zeros(3))


# sgl-project/sglang-jax@cddbf6f1cc33:python/sgl_jax/srt/kernels/fused_moe/v1/kernel.py:893-915: a def
# nested in the kernel writes through the Refs it is handed (there scratch from `pltpu.run_scoped`;
# here the kernel's own output Ref): a Ref store, whose safe `.at[].set` "fix" would drop the write
NESTED_KERNEL_WRITE = PALLAS_KERNEL.replace(
    "    o_ref[...] = 1 / (1 + 25 * jnp.abs(x)) ** 2\n",
    "    def write(out_ref):\n        out_ref[...] = 1 / (1 + 25 * jnp.abs(x)) ** 2\n\n    write(o_ref)\n",
)


def test_a_def_nested_in_a_pallas_kernel_writing_a_ref_is_not_reported(tmp_path):
    assert "def write(out_ref)" in NESTED_KERNEL_WRITE
    findings, _ = run(NESTED_KERNEL_WRITE, "JAX403")
    assert findings == []
    module = load(tmp_path, HEADER + NESTED_KERNEL_WRITE, "nested_kernel_write")
    x = jnp.arange(4.0)
    np.testing.assert_allclose(module.pallas_superspike(x), 1 / (1 + 25 * jnp.abs(x)) ** 2, rtol=1e-6)
    # the buggy twin: the same nested store in a plain jitted function, on an array
    twin = NESTED_KERNEL_WRITE.replace("superspike_kernel,", "lambda x_ref, o_ref: None,")
    twin += "\n\nout = jax.jit(superspike_kernel)(jnp.ones(3), jnp.zeros(3))\n"
    assert [code for code, _ in rows(run(twin, "JAX403")[0])] == ["JAX403"]


# stanford-crfm/levanter@9263f81e8b453241332c2c0b2d2001bfb2d2241c:src/levanter/compat/hf_checkpoints.py
# (`_to_state_dict_with_dtype`): under `eqx.filter_jit` a parameter the body passes to `.astype` is
# a dtype, a Python value filter_jit keeps static; logging it logs the dtype's name, not a tracer.
FILTER_JIT_DTYPE = """
import logging

import equinox as eqx

logger = logging.getLogger(__name__)


@eqx.filter_jit
def to_dtype(state_dict, dtype):
    logger.info(f"Converting floating-point arrays in state_dict to {dtype}")
    return {k: v.astype(dtype) for k, v in state_dict.items()}
"""


def test_logging_a_dtype_parameter_under_filter_jit_is_not_reported(tmp_path, caplog):
    findings, _ = run(FILTER_JIT_DTYPE, "JAX401")
    assert findings == []
    module = load(tmp_path, HEADER + FILTER_JIT_DTYPE, "filter_jit_dtype")
    with caplog.at_level(logging.INFO):
        out = module.to_dtype({"w": jnp.ones(2)}, jnp.bfloat16)
    assert out["w"].dtype == jnp.bfloat16
    assert "to <class 'jax.numpy.bfloat16'>" in caplog.text and "Tracer" not in caplog.text


def test_logging_the_arrays_under_filter_jit_is_still_reported():
    twin = FILTER_JIT_DTYPE.replace("state_dict to {dtype}", "state_dict to {dtype}: {state_dict}")
    assert rows(run(twin, "JAX401")[0]) == [("JAX401", "manual")]


# google-research/scenic@4a38d475ee89cb821078c0e2bf2065ee030e1535:
# scenic/projects/knowledge_visual_language/trainer_memory.py:223: `logging.info(variables.keys())`
# of a dict of traced leaves logs its keys, strings (the pytree's structure), at trace time.
LOG_KEYS = """
from absl import logging


@jax.jit
def loss(params, state):
    variables = {"params": params, **state}
    logging.info(variables.keys())
    return jnp.sum(variables["params"])
"""


def test_logging_the_keys_of_a_traced_dict_is_not_reported():
    assert run(LOG_KEYS, "JAX401")[0] == []


def test_logging_the_traced_dict_itself_is_still_reported():
    assert rows(run(LOG_KEYS.replace("variables.keys()", "variables"), "JAX401")[0]) == [("JAX401", "manual")]


# sotetsuk/pgx@079b2d730e3845c25d49d99e0ccf9a374dd04cb9:pgx/_src/games/chess.py:88-129: the table is
# built as a NumPy array at import, then rebound (with the module's other tables) to a JAX array in
# one tuple assignment before any function runs: traced code indexes a JAX array.
TABLE_REBOUND_TO_JAX = """
CAN_MOVE = np.zeros((7, 64), dtype=np.bool_)
for p in range(1, 7):
    CAN_MOVE[p, p:] = True
BETWEEN = -np.ones((64, 6), dtype=np.int32)

BETWEEN, CAN_MOVE = (jnp.array(x) for x in (BETWEEN, CAN_MOVE))


@jax.jit
def can_move(piece, to):
    return CAN_MOVE[piece, to]
"""


def test_a_numpy_table_rebound_to_a_jax_array_by_unpacking_is_not_reported(tmp_path):
    assert run(TABLE_REBOUND_TO_JAX, "JAX402")[0] == []
    module = load(tmp_path, HEADER + TABLE_REBOUND_TO_JAX, "table_rebound")
    assert bool(module.can_move(jnp.int32(3), jnp.int32(5)))


def test_the_numpy_table_left_as_numpy_is_still_reported(tmp_path):
    twin = TABLE_REBOUND_TO_JAX.replace("BETWEEN, CAN_MOVE = (jnp.array(x) for x in (BETWEEN, CAN_MOVE))", "")
    assert [f.code for f in run(twin, "JAX402")[0]] == ["JAX402"]
    module = load(tmp_path, HEADER + twin, "table_numpy")
    with pytest.raises(jax.errors.TracerArrayConversionError):
        module.can_move(jnp.int32(3), jnp.int32(5))


# ucl-bug/jwave@9d114ac jwave/acoustics/time_varying.py:157: `np.asarray(u.domain.dx)` in a function
# traced with `u` a jaxdf FourierSeries (another package): `Domain.dx` is an `eqx.field(static=True)`
# tuple of floats, so the value is a constant. A field of a field of a class the file does not show
# is not taken as traced; the twin (the field itself, `u.params`) is still reported.
NESTED_FIELD = """
import jax
import numpy as np
from jaxdf import FourierSeries


@jax.jit
def momentum(u: FourierSeries, dt):
    dx = np.asarray(u.domain.dx)
    return u.params * dt / dx[0]
"""


def test_numpy_on_a_field_of_a_field_of_another_packages_pytree_is_not_reported():
    assert [f.code for f in run(NESTED_FIELD, select="JAX402")[0]] == []
    twin = NESTED_FIELD.replace("np.asarray(u.domain.dx)", "np.asarray(u.params)")
    assert [f.code for f in run(twin, select="JAX402")[0]] == ["JAX402"]


def test_a_string_key_in_a_store_chain_makes_the_root_a_container():
    """mlech26l/gigastep@6288d650:third-party-learning/purejax/ippo.py: `state[0]["stacked_obs"]`
    is a list of observations, and a string key anywhere in the chain means no array (an array
    indexed by a string raises); the twin stores into rows of a traced array and is reported."""
    source = """
        from functools import partial


        class FrameStack:
            def __init__(self, env, n_frames: int):
                self._env = env
                self.n_frames = n_frames

            def _get_stacked_obs(self, obs, state):
                state[0]["stacked_obs"][self.pointer] = obs
                self.pointer = (self.pointer + 1) % self.n_frames
                return jnp.concatenate(state[0]["stacked_obs"], axis=-1)

            @partial(jax.jit, static_argnums=(0,))
            def reset(self, key):
                obs, state = self._env.reset(key)
                self.pointer = 0
                state[0]["stacked_obs"] = [obs] * self.n_frames
                return self._get_stacked_obs(obs, state), state


        @jax.jit
        def twin(frames, obs):
            frames = frames * 1.0
            frames[0][1] = obs
            return frames
        """
    findings, _ = run(source)
    assert [(f.code, f.line - HEADER.count("\n")) for f in findings] == [("JAX403", 26)]
    tree = ast.parse(HEADER + textwrap.dedent(source.split("@jax.jit")[0]))
    assert not InPlaceUpdateRule().could_match(tree)


# AakashKumarNain/TF_JAX_tutorials@ed6f75985f2f3a9e6651b30d6bd3673cc85a0578 chapter_4 (cells 24, 26) and
# probml/probml-notebooks@4c0da5e918930e02de5f3e78278c90efe5688b66 jax_intro (a dozen `def f`): a
# notebook jits a def in one cell and redefines the name as plain Python in a later one; the
# transform names the def above it (`jaxfix.analysis.def_order`), not the redefinition
REDEFINED_CELLS = """
# %%
import jax


def f(x):
    return x * 2


y = jax.jit(f)(1.0)
# %%
def f(x):
    print("x is", x)
    return x + 1


z = f(2)
"""


def test_a_later_plain_redefinition_of_a_jitted_name_is_not_traced():
    result = analyze(textwrap.dedent(REDEFINED_CELLS), "t.py", Config(preview=True, select=("JAX4",)))
    assert result.error is None and result.findings == []
    namespace: dict = {}
    exec(textwrap.dedent(REDEFINED_CELLS), namespace)
    assert namespace["z"] == 3


def test_the_redefinition_jitted_itself_is_still_reported():
    source = textwrap.dedent(REDEFINED_CELLS).replace("z = f(2)", "z = jax.jit(f)(2)")
    result = analyze(source, "t.py", Config(preview=True, select=("JAX4",)))
    assert [(f.code, f.line) for f in result.findings] == [("JAX401", 13)]


# google-deepmind/graphcast's xarray_jax, as fgiral000/gencast-flax-nnx@297e7c5629d3 vendors it
# (common/xarray_jax_test.py:44-48): the traced input is wrapped in an object whose
# `__array_ufunc__` sends NumPy's ufuncs to `jax.numpy`, so `np.abs(wrapped)` stays in JAX under
# `jax.jit`. The `jnp.abs` rewrite gets an object it rejects: 3 of the test file's 28 tests failed
# after a safe fix. A value some other code made is not shown to be an array: the fix is unsafe.
ARRAY_UFUNC_WRAPPER = '''
import jax.numpy as jnp


class Variable:
    def __init__(self, dims, data):
        self.dims, self.data = dims, data

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        args = [x.data if isinstance(x, Variable) else x for x in inputs]
        return Variable(self.dims, getattr(jnp, ufunc.__name__)(*args, **kwargs))

    def __add__(self, other):
        return Variable(self.dims, self.data + other)
'''
WRAPPED_UFUNC = """
import wrapper


@jax.jit
def ops_via_wrapper(inputs):
    x = wrapper.Variable(("lat", "lon"), inputs)
    x = np.abs(x + 2)
    return x.data
"""


def test_a_numpy_ufunc_on_a_value_other_code_made_gets_no_safe_fix(tmp_path, monkeypatch):
    (tmp_path / "wrapper.py").write_text(ARRAY_UFUNC_WRAPPER)
    monkeypatch.syspath_prepend(str(tmp_path))
    findings, fixed = run(WRAPPED_UFUNC, "JAX402")
    assert rows(findings) == [("JAX402", "unsafe")] and "wrapper.Variable" in findings[0].fix.title
    assert fixed == textwrap.dedent(WRAPPED_UFUNC)  # a plain fix changes nothing
    original = load(tmp_path, HEADER + textwrap.dedent(WRAPPED_UFUNC), "wrapped_ufunc")
    np.testing.assert_allclose(original.ops_via_wrapper(-jnp.ones((2, 3)) * 5), 3 * np.ones((2, 3)))
    _, rewritten = run(WRAPPED_UFUNC, "JAX402", unsafe=True)
    broken = load(tmp_path, HEADER + rewritten, "wrapped_ufunc_rewritten")
    with pytest.raises(TypeError):
        broken.ops_via_wrapper(-jnp.ones((2, 3)) * 5)
    # the buggy twin: the traced input itself goes to NumPy, which fails; the jnp fix is safe
    twin = WRAPPED_UFUNC.replace('x = wrapper.Variable(("lat", "lon"), inputs)', "x = inputs").replace(
        "return x.data", "return x"
    )
    assert rows(run(twin, "JAX402")[0]) == [("JAX402", "safe")]


HEALPIX_MAPS = """
@jax.jit
def add_ring(ring_i, alm, maps):
    if 0 in alm.keys():
        s = 0
        maps[s] = maps[s].at[:, ring_i].add(alm[s])
    return maps
"""


def test_a_store_into_a_parameter_nothing_shows_is_an_array_gets_no_safe_fix(tmp_path):
    """sukhdeep2/jax_healpix@6e77c6c jax_healpix/SPHT_jax.py:317: `maps` is a dict of maps handed to
    the jitted function (jit takes any pytree), and `maps[0] = ...` stores into that dict. The
    `.at` rewrite raises AttributeError there, so it is unsafe: a plain `fix --write` keeps the code."""
    findings, fixed = run(HEALPIX_MAPS, select="JAX403", unsafe=True)
    assert rows(findings) == [("JAX403", "unsafe")]
    assert "rather than a dict or list argument" in findings[0].message
    _, untouched = run(HEALPIX_MAPS, select="JAX403", unsafe=False)
    assert untouched == textwrap.dedent(HEALPIX_MAPS)
    original = load(tmp_path, HEADER + textwrap.dedent(HEALPIX_MAPS), "healpix_before")
    rewritten = load(tmp_path, HEADER + fixed, "healpix_after")
    maps = {0: jnp.zeros((2, 3))}
    assert float(original.add_ring(1, {0: jnp.ones(2)}, maps)[0].sum()) == 2.0
    with pytest.raises(AttributeError):
        rewritten.add_ring(1, {0: jnp.ones(2)}, maps)


def test_a_store_into_an_annotated_array_or_at_a_traced_index_keeps_its_safe_fix():
    """The twins: an annotation, or a traced index (a tracer keys no dict or list), says the
    parameter is an array, and there the store raises and the `.at` rewrite is exact."""
    annotated, _ = run(
        """
        @jax.jit
        def add_row(maps: jax.Array, row):
            maps[0] = maps[0] + row
            return maps
        """,
        select="JAX403",
    )
    traced_index, _ = run(
        """
        @jax.jit
        def put(maps, i, v):
            maps[i] = v
            return maps
        """,
        select="JAX403",
    )
    assert rows(annotated) == [("JAX403", "safe")]
    assert rows(traced_index) == [("JAX403", "safe")]


def test_jax402_an_alias_imported_as_numpy_and_as_jax_numpy_is_not_known():
    """ayaka14732/beta-vae-numpyro@5ecfe34 disentanglement-metric/disentanglement_metric.py:121
    (heldout21, wrong, twelve pasted copies): the notebook-style script imports `jax.numpy as np`
    in every cell and `numpy as np` in its last one; the import map kept the last, so the jitted
    `np.hstack((img, img_loc))` read as NumPy's. An alias imports bind to two modules means what
    the import above it says: not reported. The same call with `np` only NumPy is still reported."""
    body = """
        import jax
        import jax.numpy as np

        @jax.jit
        def reconstruct(x):
            img = (x * 255.).astype(np.int32)
            return np.hstack((img, img))

        import numpy as np
        """
    findings, _ = run(body)
    assert rows(findings) == []
    numpy_only = body.replace("import jax.numpy as np\n", "import numpy as np\n", 1)
    findings, _ = run(numpy_only)
    assert [f.code for f in findings] == ["JAX402"]
