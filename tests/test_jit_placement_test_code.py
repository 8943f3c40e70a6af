"""Test code and the jit-placement rules (issue #20): a fresh jitted wrapper in a test or a test
helper is how a test exercises jit, so JAX201-JAX203 leave test modules alone unless
`[tool.jaxfix.jit-placement] include-tests = true`; control-flow bugs there are still reported, and
so is the same program jitted again on every trip of a test's loop (JAX201, an unsafe fix)."""

from __future__ import annotations

import textwrap

import pytest

from jaxfix.analysis.pytest_files import is_test_module
from jaxfix.engine import analyze
from jaxfix.engine.config import Config, load_pyproject

HELPER = textwrap.dedent(
    """
    import jax


    def run_inside_jit(fn, *args):
        return jax.jit(lambda *a: fn(*a))(*args)


    def run_each(fns, x):
        return [run_inside_jit(fn, x) for fn in fns]


    def run_all(fns, x):
        for fn in fns:
            x = jax.jit(lambda v: fn(v))(x)
        return x


    @jax.jit
    def positive(x):
        if x > 0:
            return x
        return -x
    """
)


@pytest.mark.parametrize(
    "path",
    [
        "test_mcmc.py",
        "pkg/test_mcmc.py",
        "pkg/mcmc_test.py",
        "conftest.py",
        "tests/conftest.py",
        "tests/helpers.py",
        "project/test/util/jit_helpers.py",
        "C:\\proj\\tests\\util.py",
    ],
)
def test_test_modules_are_recognised(path):
    assert is_test_module(path)


@pytest.mark.parametrize(
    "path", ["mcmc.py", "pkg/testing_utils.py", "pkg/contest.py", "latest.py", "tests.py", "pkg/attest/x.py", "", None]
)
def test_other_modules_are_not_test_code(path):
    assert not is_test_module(path)


def _codes(path: str, config: Config) -> list[str]:
    result = analyze(HELPER, path, config)
    assert result.error is None, result.error
    return sorted(f.code for f in result.findings)


def test_placement_is_not_reported_in_test_code_by_default_but_control_flow_is():
    config = Config(select=("ALL",))
    assert _codes("pkg/helpers.py", config) == ["JAX201", "JAX202", "JAX301"]
    for path in ("tests/helpers.py", "pkg/test_helpers.py", "conftest.py"):
        assert _codes(path, config) == ["JAX301"], path


def test_include_tests_option_reports_test_code_too(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix.jit-placement]\ninclude-tests = true\n", encoding="utf-8")
    config = load_pyproject(tmp_path / "pyproject.toml")
    assert config is not None
    config = Config(select=("ALL",), rule_options=config.rule_options)
    assert config.options()["jit-placement"]["include-tests"] is True
    assert _codes(str(tmp_path / "tests" / "helpers.py"), config) == ["JAX201", "JAX202", "JAX301"]


def test_include_tests_must_be_a_boolean(tmp_path):
    from jaxfix.engine.config import ConfigError

    (tmp_path / "pyproject.toml").write_text('[tool.jaxfix.jit-placement]\ninclude-tests = "yes"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="include-tests"):
        load_pyproject(tmp_path / "pyproject.toml")


TEST_CASE_HELPER = textwrap.dedent(
    """
    import jax
    from absl.testing import parameterized


    class EquivalenceTest(parameterized.TestCase):
        def _test_jittable(self, dist):
            @jax.jit
            def log_prob(event, d):
                return d.log_prob(event)

            return log_prob(dist.sample(), dist)


    class NormalTest(EquivalenceTest):
        def check(self, dist):
            return jax.jit(lambda d: d.mean())(dist)


    class Sampler:
        def run(self, x):
            return jax.jit(lambda v: v * 2)(x)


    def drive(test, sampler, dists):
        for dist in dists:  # each method runs again: a fresh jit per call recompiles
            test._test_jittable(dist)
            test.check(dist)
            sampler.run(dist)
    """
)


def test_methods_of_test_case_classes_are_test_code_in_any_file(tmp_path):
    """distrax keeps its test base class in `distrax/_src/utils/equivalence.py` (not a test module
    by name); its `_test_jittable` builds a fresh jitted function per call on purpose. Methods of
    a class deriving from a `TestCase` (directly or through a class of the module) are test code;
    the class beside them that is no test case is still reported."""
    result = analyze(TEST_CASE_HELPER, "pkg/utils/equivalence.py", Config(select=("ALL",), preview=True))
    assert [(f.code, f.line) for f in result.findings] == [("JAX202", 22)]
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix.jit-placement]\ninclude-tests = true\n", encoding="utf-8")
    options = load_pyproject(tmp_path / "pyproject.toml").rule_options
    config = Config(select=("ALL",), rule_options=options, preview=True)
    result = analyze(TEST_CASE_HELPER, "pkg/utils/equivalence.py", config)
    assert sorted(f.line for f in result.findings) == [9, 17, 22]


def test_the_last_screen_leaves_test_modules_out_unless_include_tests(tmp_path, monkeypatch):
    """`could_match_in`: a test module where only the jit-placement rules could report is not
    libcst-parsed at all; with `include-tests` it is, and the sites are reported."""
    import jaxfix.engine.fixing as fixing

    source = HELPER.replace("@jax.jit\ndef positive(x):\n    if x > 0:\n        return x\n    return -x\n", "")
    source = source.replace("def run_all(fns, x):\n    for fn in fns:\n        x = jax.jit(lambda v: fn(v))(x)\n    return x\n", "")
    assert "positive" not in source and "run_all" not in source
    parsed = []
    real = fixing.parse_module
    monkeypatch.setattr(fixing, "parse_module", lambda text: parsed.append(text) or real(text))
    assert analyze(source, "tests/helpers.py", Config()).findings == []
    assert parsed == []
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix.jit-placement]\ninclude-tests = true\n")
    found = analyze(source, "tests/helpers.py", load_pyproject(tmp_path / "pyproject.toml")).findings
    assert {f.code for f in found} == {"JAX202"}
    assert len(parsed) == 1


# The loops of real tests, each cut to its shape (heldout labels of the spent pools, recall entries
# read as real): the same program jitted again per trip is reported in test code, a configuration
# per trip is not.
TEST_LOOPS = textwrap.dedent(
    """
    import jax
    import jax.numpy as jnp


    def test_viewer_animate(env, key):
        # instadeepai/jumanji@590005b jumanji/environments/routing/pac_man/viewer_test.py:50
        state, _ = jax.jit(env.reset)(key)
        states = [state]
        for _ in range(4):
            key, subkey = jax.random.split(key)
            action = jax.random.choice(subkey, jnp.arange(4), shape=(1,))[0]
            state, _ = jax.jit(env.step)(state, action)
            states.append(state)
        return states


    def test_insert(buffer, transitions):
        # adaptive-intelligent-robotics/QDax@46b8fee .../buffers_test/trajectory_buffer_test.py:182
        for i in range(4):
            buffer = jax.jit(buffer.insert)(transitions[i])
        return buffer


    def test_one_at_a_time(opt, params, state):
        # invrs-io/opt tests/optimizers/test_lbfgsb.py:430
        def loss_fn(p):
            return jnp.sum(p ** 2)

        for _ in range(10):
            value, grad = jax.jit(jax.value_and_grad(loss_fn))(params)
            params = params - 0.1 * grad
        return params


    def test_dtypes(dtypes):
        # google/neural-tangents@<dev> tests/predict_test.py:1178: one program per dtype
        out = []
        for dtype in dtypes:
            def x():
                return jnp.zeros((2, 3), dtype)

            out.append(jax.jit(x)())
        return out


    def test_variants(variants, z):
        # philipjones77/arbPlusJAX tests/test_bessel_jax_contract.py:95: one function per variant
        for name, fn in variants.items():
            jit_fn = jax.jit(lambda t, impl=fn: impl(0.4, t))
            assert jnp.isfinite(jit_fn(z))


    def test_pairs(pairs, a, b):
        # inigozubeldia/cosmocnc_jax tests/test_circular_conv.py:83: a different function per trip
        for label, fn in pairs:
            vfn = jax.jit(jax.vmap(fn))
            vfn(a, b)


    def test_windows(make, windows, x):
        # google-deepmind/simply simply/utils/ragged_paged_attention_test.py:631: an object per window
        for window in windows:
            ds = make(window_size=window).init()
            jax.jit(ds.mask)(x)
    """
)


def test_the_same_program_jitted_per_trip_is_reported_in_test_code_with_an_unsafe_fix(tmp_path):
    result = analyze(TEST_LOOPS, "tests/test_loops.py", Config(select=("JAX201",)))
    assert result.error is None, result.error
    found = {f.line: f for f in result.findings}
    assert sorted(found) == [13, 21, 31]  # env.step, buffer.insert, value_and_grad(loss_fn)
    for finding in found.values():
        assert finding.fix.safety.value != "safe", finding
        assert "test code" in finding.message or finding.fix.safety.value == "manual", finding
    # the same module outside test code: the configurations are still left alone by the loop
    # checks they always had, and the three sites keep their fixes as before
    plain = analyze(TEST_LOOPS, "pkg/loops.py", Config(select=("JAX201",)))
    assert {13, 21, 31} <= {f.line for f in plain.findings}
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix.jit-placement]\ninclude-tests = true\n")
    options = load_pyproject(tmp_path / "pyproject.toml").rule_options
    every = analyze(TEST_LOOPS, "tests/test_loops.py", Config(select=("JAX201",), rule_options=options))
    assert {f.line for f in every.findings} == {f.line for f in plain.findings}
