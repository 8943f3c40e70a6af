"""compile-cost rules (JAX501-503): detection edges, options, and what the rewrites change when run.

The golden cases (text, findings, behaviour through `jaxfix.verify`) live in
`fixtures/compile_cost/`; these tests cover what the fixtures cannot: option values, the
boundary with JAX303, gradients through a rewritten loop (with a small threshold, so the
unrolled original compiles quickly), the HLO size before and after JAX503, and `could_match`
agreeing with `check`. Real jax on CPU, real files in tmp dirs.
"""

from __future__ import annotations

import ast
import itertools
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fixture_cases import discover_cases, load_as_module

from codemods.compile_cost.large_captured_constant import LargeConstantRule
from codemods.compile_cost.unblocked_timing import UnblockedTimingRule
from codemods.compile_cost.unrolled_python_loop_in_jit import UnrolledLoopRule
from jaxfix.analysis.shapes import array_size, int_value
from jaxfix.engine import analyze
from jaxfix.engine.config import Config

_COUNTER = itertools.count()


def run(source: str, select=("JAX5",), unsafe=False, **options):
    config = Config(select=select, unsafe_fixes=unsafe, preview=True)
    for rule, values in options.items():
        config = config.with_options(rule.replace("_", "-"), **{k.replace("_", "-"): v for k, v in values.items()})
    result = analyze(textwrap.dedent(source), "case.py", config, fix=True)
    assert result.error is None, result.error
    return result


def codes(result) -> list[str]:
    return [f"{f.line} {f.code} {f.fix.safety.value if f.fix else 'none'}" for f in result.findings]


def load(tmp_path: Path, text: str):
    path = tmp_path / f"_compile_cost_case_{next(_COUNTER)}.py"
    path.write_text(text, encoding="utf-8")
    return load_as_module(path)


# -- JAX501 -----------------------------------------------------------------------------------------

TIMING = """
    import time
    from time import perf_counter as clock

    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda x: x @ x)


    def aliased(x):
        t0 = clock()
        y = f(x)
        return y, clock() - t0
"""


def test_timing_found_through_an_aliased_clock_and_fixed_before_the_clock_line():
    result = run(TIMING)
    assert codes(result) == ["14 JAX501 safe"]
    assert "    y = f(x)\n    jax.block_until_ready(y)\n    return y, clock() - t0\n" in result.fixed_source


def test_timing_at_module_level_and_blocking_by_assert_allclose():
    source = """
        import time

        import jax.numpy as jnp
        import numpy as np

        x = jnp.ones((4, 4))
        t0 = time.perf_counter()
        y = jnp.dot(x, x)
        print(f"{time.perf_counter() - t0:.3f}")

        t1 = time.perf_counter()
        z = jnp.dot(x, x)
        np.testing.assert_allclose(z, 4.0)
        print(time.perf_counter() - t1)
    """
    result = run(source)
    assert codes(result) == ["10 JAX501 safe"]
    assert "y = jnp.dot(x, x)\njax.block_until_ready(y)\nprint(" in result.fixed_source
    assert "import jax\n" in result.fixed_source  # the fix's import is added


def test_timing_ignores_regions_without_jax_work_and_key_creation():
    source = """
        import time

        import jax


        def setup():
            t0 = time.perf_counter()
            key = jax.random.PRNGKey(0)
            data = list(range(10))
            return key, data, time.perf_counter() - t0
    """
    assert codes(run(source)) == []


def test_timing_fixed_code_is_ready_when_the_clock_is_read(tmp_path):
    """The closing clock line also asks the array whether it is ready: after the fix it always is
    (the inserted `jax.block_until_ready` runs first). No timing is asserted."""
    source = textwrap.dedent(
        """
        import time

        import jax
        import jax.numpy as jnp


        @jax.jit
        def step(x):
            for _ in range(4):
                x = jnp.tanh(x @ x)
            return x


        def bench(x):
            t0 = time.perf_counter()
            out = step(x)
            elapsed, ready = time.perf_counter() - t0, out.is_ready()
            return out, elapsed, ready
        """
    )
    result = run(source)
    assert codes(result) == ["18 JAX501 safe"]
    old, new = load(tmp_path, source), load(tmp_path, result.fixed_source)
    x = jnp.ones((512, 512)) / 512
    for module in (old, new):
        jax.block_until_ready(module.bench(x)[0])  # compile outside the measured calls
    for _ in range(3):
        out, elapsed, ready = new.bench(x)
        assert ready is True and elapsed >= 0.0
    np.testing.assert_allclose(out, old.bench(x)[0])


# -- JAX502 -----------------------------------------------------------------------------------------

LOOP = """
    import jax
    import jax.numpy as jnp


    @jax.jit
    def power(w, x):
        h = x
        for k in range(20):
            h = jnp.tanh(h * w) + 0.01 * k
        return h.sum()
"""


def test_unrolled_threshold_is_an_option():
    assert codes(run(LOOP)) == []
    result = run(LOOP, unrolled_python_loop_in_jit={"max_unrolled_trips": 19})
    assert codes(result) == ["9 JAX502 unsafe"]
    assert "20 times" in result.findings[0].message
    assert codes(run(LOOP, unrolled_python_loop_in_jit={"max_unrolled_trips": 20})) == []
    # below the floor of 16 trips the option counts as 16: a 16-trip loop is never reported
    short = LOOP.replace("range(20)", "range(16)")
    assert codes(run(short, unrolled_python_loop_in_jit={"max_unrolled_trips": 1})) == []
    assert not UnrolledLoopRule().could_match(ast.parse(textwrap.dedent(short)))


def test_unrolled_rewrite_keeps_values_and_gradients(tmp_path):
    result = run(LOOP, unsafe=True, unrolled_python_loop_in_jit={"max_unrolled_trips": 4})
    assert "jax.lax.fori_loop(0, 20, loop_body, h)" in result.fixed_source
    old, new = load(tmp_path, textwrap.dedent(LOOP)), load(tmp_path, result.fixed_source)
    w, x = jnp.float32(0.7), jnp.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(new.power(w, x), old.power(w, x), rtol=1e-6)
    for argnum in (0, 1):
        g_old = jax.grad(old.power, argnums=argnum)(w, x)
        g_new = jax.grad(new.power, argnums=argnum)(w, x)
        np.testing.assert_allclose(g_new, g_old, rtol=1e-5)


# google/neural-tangents@c17e770b:notebooks/neural_tangents_cookbook.ipynb cells 56-61: the
# training loop runs eagerly and under `vmap(train_network)(keys)` at top level, which compiles
# nothing (each operation is dispatched as it goes); the jitted twins stage the whole loop
EAGER_VMAP = """
    import jax
    import jax.numpy as jnp
    from jax import jit, random, vmap

    training_steps = 1000
    grad_loss = jit(lambda p, x: jnp.tanh(p * x))


    def train_network(key):
        p = random.normal(key, (3,))
        for i in range(training_steps):
            p = p - 0.01 * grad_loss(p, jnp.float32(i))
        return p


    keys = random.split(random.PRNGKey(0), 4)
    params = train_network(keys[0])
    ensemble = vmap(train_network)(keys)
"""


@pytest.mark.parametrize(
    "twin, reported",
    [
        ("", False),
        ("ensemble_jit = jit(vmap(train_network))(keys)\n", True),  # jit stages the vmapped loop
        ("batched = vmap(train_network)\n", True),  # a kept mapped callable may be jitted elsewhere
        ("@jit\ndef run(keys):\n    return vmap(train_network)(keys)\n", True),  # vmap inside jit
    ],
)
def test_unrolled_loop_under_eager_vmap_only_is_not_reported(twin, reported):
    source = textwrap.dedent(EAGER_VMAP) + twin
    assert bool(run(source).findings) == reported, codes(run(source))


def test_traced_bound_is_jax303_only():
    source = """
        import jax
        import jax.numpy as jnp


        @jax.jit
        def f(x, n):
            for i in range(n):
                x = jnp.sin(x)
            return x
    """
    result = run(source, select=("JAX",), unrolled_python_loop_in_jit={"max_unrolled_trips": 0})
    assert [f.code for f in result.findings] == ["JAX303"]


def test_unrolled_index_uses_that_stay_arrays_are_rewritten():
    source = """
        import jax
        import jax.numpy as jnp
        from jax import lax

        N = 300


        @jax.jit
        def f(x, key):
            acc = jnp.zeros(x.shape[1:])
            for i in range(N):
                k = jax.random.fold_in(key, i)
                row = lax.dynamic_slice(x, (i % 3, 0), (1, x.shape[1]))[0]
                acc = acc + x[i % 3] * i + row + jax.random.normal(k, acc.shape)
            return acc
    """
    result = run(source, unsafe=True)
    assert codes(result) == ["12 JAX502 unsafe"]
    assert "lax.fori_loop(0, N, loop_body, acc)" in result.fixed_source


def test_unrolled_index_in_a_python_list_is_manual():
    source = """
        import jax
        import jax.numpy as jnp

        SCALES = [0.5] * 200


        @jax.jit
        def f(x):
            for i in range(200):
                x = x * SCALES[i]
            return x
    """
    result = run(source)
    assert codes(result) == ["10 JAX502 manual"]
    assert "traced integer" in result.findings[0].fix.title


# -- JAX503 -----------------------------------------------------------------------------------------

CONSTANT = """
    import jax
    import jax.numpy as jnp
    import numpy as np

    N = 1000
    W = np.random.default_rng(0).normal(size=(N, N)).astype(np.float32)


    @jax.jit
    def predict(x):
        return jnp.tanh(x @ W)


    def run(x):
        return predict(x)
"""


def test_constant_rewrite_shrinks_the_program_and_keeps_results(tmp_path):
    result = run(CONSTANT, unsafe=True)
    assert codes(result) == ["12 JAX503 unsafe"]
    assert "NumPy array" in result.findings[0].message  # copied to the device on every call
    assert "def predict(x, W):" in result.fixed_source and "return predict(x, W)" in result.fixed_source
    old, new = load(tmp_path, textwrap.dedent(CONSTANT)), load(tmp_path, result.fixed_source)
    x = jnp.ones((2, 1000)) / 1000
    np.testing.assert_allclose(new.run(x), old.run(x), rtol=1e-5, atol=1e-6)
    before = len(old.predict.lower(x).as_text())
    after = len(new.predict.lower(x, new.W).as_text())
    assert before > 1_000_000 > 10_000 > after  # a million floats embedded, then none


def test_constant_threshold_option_and_small_arrays():
    source = """
        import jax
        import jax.numpy as jnp

        T = jnp.ones((16, 16))


        @jax.jit
        def f(x):
            return x @ T


        def g(x):
            return f(x)
    """
    assert codes(run(source)) == []
    assert codes(run(source, large_captured_constant={"min_constant_elements": 256})) == ["10 JAX503 unsafe"]


def test_constant_manual_when_callers_are_unknown():
    source = """
        import jax
        import jax.numpy as jnp

        W = jnp.zeros((2000, 1000))


        @jax.jit
        def library_entry(x):
            return x @ W.T


        @jax.jit
        def passed_around(x):
            return x + W[0]


        handlers = {"a": passed_around}
        passed_around(jnp.ones(1000))
    """
    result = run(source)
    assert codes(result) == ["10 JAX503 manual", "15 JAX503 manual"]
    assert "not called in this module" in result.findings[0].fix.title
    assert "used other than by calling it" in result.findings[1].fix.title


def test_constant_rebound_global_is_not_a_constant():
    source = """
        import jax
        import jax.numpy as jnp

        W = jnp.zeros((2000, 1000))


        @jax.jit
        def f(x):
            return x @ W.T


        def reset():
            global W
            W = jnp.ones((2000, 1000))
    """
    assert codes(run(source)) == []


def test_array_size_forms():
    import libcst as cst

    from jaxfix.analysis.names import ImportMap

    module = cst.parse_module("import jax\nimport jax.numpy as jnp\nimport numpy as np\n")
    names = ImportMap.from_module(module)
    consts = {"N": 100}
    cases = {
        "jnp.ones((N, N))": 10_000,
        "np.random.randn(N, 3)": 300,
        "jnp.asarray(np.random.rand(N)) * 2": 100,
        "jax.random.normal(key, (N, N, 2))": 20_000,
        "jnp.eye(N)": 10_000,
        "jnp.arange(0, N * N, 2)": 5_000,
        "np.random.normal(0.0, 1.0, size=(N, 10)).astype(np.float32)": 1_000,
        "rng.standard_normal((N, 5))": 500,
        "jnp.linspace(0, 1, N).reshape(10, 10)": 100,
    }
    for text, size in cases.items():
        found = array_size(cst.parse_expression(text), names, consts)
        assert found is not None and found[0] == size, text
    for text in ("jnp.ones(x.shape)", "load()", "jnp.zeros((n, 3))", "np.random.randn(*shape)"):
        assert array_size(cst.parse_expression(text), names, consts) is None, text
    assert int_value(cst.parse_expression("2 ** 10 - N // 3"), consts) == 991


# -- could_match agrees with check ----------------------------------------------------------------


@pytest.mark.parametrize(
    "rule,code",
    [(UnblockedTimingRule, "JAX501"), (UnrolledLoopRule, "JAX502"), (LargeConstantRule, "JAX503")],
)
def test_could_match_admits_every_fixture_with_a_finding(rule, code):
    admitted = 0
    for case in discover_cases():
        if case.family != "compile_cost":
            continue
        source = case.input.read_text(encoding="utf-8")
        result = analyze(source, str(case.input), Config(select=(code,), preview=True))
        if result.findings:
            assert any(p in source for p in rule.prefilter), case.id
            assert rule().could_match(ast.parse(source)), case.id
            admitted += 1
    assert admitted >= 2


def test_could_match_rejects_files_without_jax():
    source = "import time\n\nt0 = time.perf_counter()\nfor i in range(1000):\n    pass\nprint(time.perf_counter() - t0)\n"
    tree = ast.parse(source)
    assert not UnblockedTimingRule().could_match(tree)
    assert not UnrolledLoopRule().could_match(tree)
    assert not LargeConstantRule().could_match(tree)


TIMED_REGIONS = {
    # (text, whether the rule reports): the screen must admit every reported one
    "jitted_call_timed": ("import jax, time\nf = jax.jit(abs)\nt0 = time.time()\ny = f(1.0)\nprint(time.time() - t0)\n", True),
    "staged_call_in_a_def": (
        "import time\nimport jax.numpy as jnp\n\ndef bench(x):\n    t0 = time.perf_counter()\n"
        "    y = jnp.dot(x, x)\n    dt = time.perf_counter() - t0\n    return y, dt\n",
        True,
    ),
    "semicolons": ("import jax, time\nf = jax.jit(abs)\nt0 = time.time(); a = 1\nt1 = time.time()\ny = f(1.0)\nprint(time.time() - t1)\n", True),
    "timeit_lambda": ("import jax, timeit\nf = jax.jit(abs)\ntimeit.timeit(lambda: f(1.0), number=3)\n", True),
    # jax's dispatch.py and compiler.py: compile durations logged around calls of jax internals
    "no_jax_work_in_the_region": (
        "import time, logging\nimport jax\n\ndef compile_it(c):\n    start = time.time()\n"
        "    out = backend_compile(c)\n    logging.info('took %s', time.time() - start)\n    return out\n",
        False,
    ),
    "jax_work_after_the_clock_read": (
        "import time\nimport jax.numpy as jnp\nt0 = time.monotonic()\nsetup()\nt1 = time.monotonic()\n"
        "y = jnp.ones(3)\nlog(t1 - t0)\n",
        False,
    ),
    # a def statement only defines its body: its clock read neither ends the region nor runs in it
    # (issue #29: JAX501 looked inside nested function bodies), nor does a lambda's
    "clock_read_in_a_def_statement": (
        "import time\nimport jax.numpy as jnp\nt0 = time.time()\ndef later():\n    return time.time()\n"
        "y = jnp.ones(3)\nprint(time.time() - t0)\n",
        True,
    ),
    "clock_read_in_a_lambda": (
        "import time\nimport jax.numpy as jnp\nt0 = time.time()\nlater = lambda: time.time()\n"
        "y = jnp.ones(3)\nprint(time.time() - t0)\n",
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(TIMED_REGIONS))
def test_timing_screen_admits_every_reported_region_and_rejects_regions_without_jax_work(name):
    source, reported = TIMED_REGIONS[name]
    found = analyze(source, "bench.py", Config(select=("JAX501",), preview=True)).findings
    assert bool(found) == reported, found
    assert UnblockedTimingRule().could_match(ast.parse(source)) == reported


def test_constant_fix_keeps_static_argnames_and_refuses_negative_static_argnums():
    source = """
        from functools import partial

        import jax
        import jax.numpy as jnp

        W = jnp.ones((1000, 1000))


        @partial(jax.jit, static_argnames=("n",))
        def f(x, n):
            return x @ W * n


        @partial(jax.jit, static_argnums=(-1,))
        def g(x, n):
            return x @ W * n


        def run(x):
            return f(x, n=2) + g(x, 3)
    """
    result = run(source, unsafe=True)
    assert codes(result) == ["12 JAX503 unsafe", "17 JAX503 manual"]
    assert "def f(x, n, W):" in result.fixed_source
    assert "f(x, n=2, W=W)" in result.fixed_source  # a keyword call gets a keyword argument
    assert "count from the end" in result.findings[1].fix.title


def test_timeit_forms():
    source = """
        import timeit

        import jax.numpy as jnp

        x = jnp.ones(100)
        a = timeit.repeat(stmt=lambda: jnp.sin(x), number=5)
        b = timeit.Timer(lambda: jnp.cos(x).block_until_ready()).timeit(3)
        c = timeit.timeit(lambda: sum(range(10)), number=5)
    """
    result = run(source)
    assert codes(result) == ["7 JAX501 safe"]
    assert "timeit.repeat(stmt=lambda: jax.block_until_ready(jnp.sin(x)), number=5)" in result.fixed_source


def test_timeit_of_a_function_object():
    """hyungkwonko/jax-tutorial@dffae70 e4_vmap.py:24 (heldout17 recall): `timeit(f, number=n)` of a
    jitted `f` times dispatch; the same call of a plain NumPy-style function is not JAX work."""
    source = """
        from timeit import timeit

        import jax
        import jax.numpy as jnp


        def naive():
            return sum(range(10))


        @jax.jit
        def batched(x=jnp.ones(3)):
            return jnp.sin(x)


        print(timeit(naive, number=10), timeit(batched, number=10))
    """
    result = run(source)
    assert codes(result) == ["17 JAX501 safe"]
    assert "timeit(lambda: jax.block_until_ready(batched()), number=10)" in result.fixed_source
    assert "timeit(naive, number=10)" in result.fixed_source


NEST = """
    import jax
    import jax.numpy as jnp

    ROWS = 20


    @jax.jit
    def smooth(x):
        for _ in range(ROWS):
            for j in range(8):
                x = x + 0.01 * jnp.sin(x * j)
        return x
"""


def test_nested_short_loops_count_their_product(tmp_path):
    source = textwrap.dedent(NEST)
    assert UnrolledLoopRule().could_match(ast.parse(source))
    assert codes(run(NEST)) == ["10 JAX502 unsafe"]  # 20 x 8 = 160 copies > 100
    assert "160 times" in run(NEST).findings[0].message
    assert codes(run(NEST, unrolled_python_loop_in_jit={"max_unrolled_trips": 160})) == []
    result = run(NEST, unsafe=True)
    # the outer loop is rolled; the inner one (8 trips) stays unrolled inside the body
    assert "jax.lax.fori_loop(0, ROWS, loop_body, x)" in result.fixed_source
    assert "        for j in range(8):" in result.fixed_source
    old, new = load(tmp_path, source), load(tmp_path, result.fixed_source)
    x = jnp.linspace(-1.0, 1.0, 4)
    np.testing.assert_allclose(new.smooth(x), old.smooth(x), rtol=1e-5)


def test_a_long_inner_loop_is_reported_alone():
    source = NEST.replace("range(8)", "range(200)").replace("ROWS = 20", "ROWS = 2")
    # the outer loop (2 x 200) is not reported again; the inner one is manual because the shared
    # JAX303 liveness check treats every local as live after a loop nested in another block
    result = run(source)
    assert codes(result) == ["11 JAX502 manual"]
    assert "200 times" in result.findings[0].message


# -- JAX504 / JAX505 (timing magics, read in their jupytext `.py` form) ---------------------------

def test_magic_cell_making_arrays_only_is_not_timed_jax_work():
    """probml/rebayes@3b88072 demos/misc/l-rvga-flax.ipynb cell 11: a `%%time` cell that loads
    MNIST with NumPy and copies it with `jnp.array(X)[:n]` times the loader, not JAX work. Its twin
    hands a made array straight to a notebook helper, which computes: still reported."""
    loader = """
        import numpy as np
        import jax.numpy as jnp

        def load():
            return np.ones((500, 784)), np.ones(500)

        # %%time
        X_train, y_train = load()
        X_train = jnp.array(X_train)[:100]
        y_train = jnp.array(y_train)[:100]
        # %%
        print(X_train.shape)
    """
    assert codes(run(loader)) == []
    twin = """
        import jax.numpy as jnp

        def render(x):
            return jnp.sin(x) * 2

        # %%time
        visible = render(jnp.ones(1000))
        # %%
        print(visible.shape)
    """
    assert codes(run(twin)) == ["7 JAX504 safe"]
    alone = """
        import jax.numpy as jnp

        # %timeit jnp.ones((1000, 1000))
    """
    assert codes(run(alone)) == ["4 JAX504 safe"]


def test_magic_cell_reading_a_value_inside_a_with_block_waits():
    """jeertmans/DiffeRT@fa21453 docs/source/notebooks/coherence.ipynb cell 7: the `%%time` cell
    computes `G_min` inside `with reuse(figure=fig)` and passes `float(G_min)` to the plot in the
    same block, which waits for the whole computation. The twin formats nothing: reported."""
    waited = """
        import contextlib
        import jax.numpy as jnp

        x = jnp.ones((200, 200))
        # %%time
        with contextlib.nullcontext():
            G = 10 * jnp.log10(jnp.abs(x) + 1)
            G_min = G.min()
            print(float(G_min))
    """
    assert codes(run(waited)) == []
    twin = waited.replace("print(float(G_min))", "label = 'min'")
    assert codes(run(twin)) == ["6 JAX504 none"]


FIRST_CALL = """
    import jax
    import jax.numpy as jnp

    @jax.jit
    def train(key):
        return jax.random.normal(key, (100,)).sum()

    keys = jax.random.split(jax.random.PRNGKey(0), 8)
"""


def test_first_call_that_makes_the_notebooks_data_is_not_reported():
    """probml/rebayes@3b88072 demos/gradually-rotating/damped-rotating-mnist.ipynb cell 18: a
    `%%time` of the one-off sweep whose `outputs` later cells read; a warm-up call would run the
    sweep twice. SGMCMCJax@cb90097 docs/nbs/BNN.ipynb cell 5: the first call inside a 2,000-step
    loop compiles once among the loop's runs. rebayes ensemble-hetdnn-rmnist-trenches.ipynb cell 29:
    an eager `jax.vmap(f)(x)` compiles no function. The twin (a discarded result) is reported."""
    used_later = FIRST_CALL + """
    # %%time
    outputs = jax.block_until_ready(train(keys[0]))
    # %%
    print(outputs)
    """
    assert codes(run(used_later, select=("JAX505",))) == []
    looped = FIRST_CALL + """
    # %%time
    for k in keys:
        total = train(k)
    """
    assert codes(run(looped, select=("JAX505",))) == []
    vmapped = FIRST_CALL.replace("    @jax.jit\n", "") + """
    # %%time
    out = jax.vmap(train)(keys).block_until_ready()
    """
    assert codes(run(vmapped, select=("JAX505",))) == []
    twin = FIRST_CALL + """
    # %%time
    outputs = jax.block_until_ready(train(keys[0]))
    """
    assert codes(run(twin, select=("JAX505",))) == ["11 JAX505 none"]
