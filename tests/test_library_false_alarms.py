"""Shapes of correct code in mature JAX libraries that jaxfix once reported (issue #20: no
false alarms). Each case names the code it was reduced from; the buggy variant beside it must
still be reported, so a case cannot pass by the rule going quiet."""

from __future__ import annotations

import textwrap
from pathlib import Path

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def codes(
    source: str, path: str = "lib.py", options: dict | None = None, preview: bool = True
) -> list[tuple[str, int]]:
    """The findings, preview ones included unless `preview=False` (a false alarm must not be
    reported even there)."""
    config = Config(select=("ALL",), preview=preview)
    for table, values in (options or {}).items():
        config = config.with_options(table, **values)
    result = analyze(textwrap.dedent(source), path, config, fix=False)
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


def test_a_parameter_shadows_an_outer_def_of_the_same_name():
    """equinox tests/test_closure_to_pytree.py: `run(f, y)` calls its argument `f`, not the
    test's outer `f(flag)`, whose `if flag:` runs eagerly."""
    source = """
        import jax

        def test_closure():
            def f(flag):
                if flag:
                    return 1
                return 2

            @jax.jit
            def run(%s, y):
                return f(y)
        """
    assert codes(source % "f") == []
    assert codes(source % "g") == [("JAX301", 6)]  # no parameter `f`: `run` calls the outer `f`


def test_filter_jit_keeps_a_literal_passed_at_every_call_static():
    """equinox tests/test_while_loop.py: `run(x, true=True)` under `eqx.filter_jit` (non-arrays are
    static there); under `jax.jit` the same literal becomes a traced bool."""
    source = """
        import equinox as eqx
        import jax

        @eqx.filter_jit
        def run(x, true):
            if true:
                return x + 1
            return x

        @jax.jit
        def run_jit(x, true):
            if true:
                return x + 1
            return x

        a = run(1.0, true=True)
        b = run(1.0, true=False)
        c = run_jit(1.0, True)
        """
    assert codes(source) == [("JAX301", 13)]


def test_dunder_attributes_are_static():
    """equinox tests/test_module.py: `assert k.__name__ == "f"` inside a jitted function."""
    source = """
        import jax

        @jax.jit
        def check(k, x):
            assert k.__name__ == "f"
            assert x.sum() > 0
            return x
        """
    assert codes(source) == [("JAX305", 7)]


def test_side_effects_in_traced_test_code_are_left_alone():
    """equinox tests/test_jit.py (`nonlocal num_traces; num_traces += 1`) and haiku
    stateful_test.py (`witness.append(x)`): how a test observes tracing. The same code elsewhere
    is reported, and the option brings the test code back."""
    source = """
        import jax

        def test_traces():
            num_traces = 0
            witness = []

            @jax.jit
            def f(x):
                nonlocal num_traces
                num_traces += 1
                witness.append(x)
                return x

            f(1.0)
            assert num_traces == 1
        """
    assert codes(source, path="tests/test_jit.py") == []
    assert codes(source, path="model.py") == [("JAX404", 11), ("JAX404", 12)]
    reported = codes(
        source, path="tests/test_jit.py", options={"outer-state-mutation-in-traced-code": {"include-tests": True}}
    )
    assert reported == [("JAX404", 11), ("JAX404", 12)]


def test_a_conversion_guarded_by_a_tracer_test_is_not_reported():
    """equinox `branched_error_if_impl`: `.item()` only where `not isinstance(p, jax.core.Tracer)`."""
    source = """
        import jax

        @jax.jit
        def f(x, pred):
            if not isinstance(pred, jax.core.Tracer):
                pred = pred.item()
            n = int(x) if not isinstance(x, jax.core.Tracer) else 0
            return x + pred + n + int(pred)
        """
    assert codes(source) == [("JAX304", 9)]


def test_a_tracer_test_in_a_tuple_of_classes_guards_too():
    """imewei/rheojax@b79e79e rheojax/utils/mittag_leffler.py:102: the range check of `alpha` runs
    only where `not isinstance(alpha, (jax.core.Tracer, jnp.ndarray))`, never on a tracer; the
    same check with no guard (its buggy twin) is still reported."""
    source = """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def guarded(z, alpha):
            if not isinstance(alpha, (jax.core.Tracer, jnp.ndarray)):
                if not (0 < alpha <= 2):
                    raise ValueError("alpha")
            return z * alpha

        @jax.jit
        def unguarded(z, alpha):
            if not (0 < alpha <= 2):
                raise ValueError("alpha")
            return z * alpha
        """
    assert codes(source) == [("JAX301", 14)]


def test_membership_in_a_mapping_is_a_python_bool():
    """haiku `box_and_fill_missing`: `if k1 in a and k2 in a[k1]` on parameter mappings. Membership
    in a display compares with `==`, which is traced."""
    source = """
        import jax

        @jax.jit
        def fill(a, b, x):
            out = {}
            for k1, v1 in b.items():
                if k1 in a and "w" not in a[k1]:
                    out[k1] = v1
            if x in (0.0, 1.0):
                x = x + 1
            return out, x
        """
    assert codes(source) == [("JAX301", 10)]


def test_a_nested_helper_returning_identity_tests_is_static():
    """haiku `stateful.difference`: a nested `is_new_rng(a, b)` returns `a[0] is not b[0]`; a
    nested helper returning an array comparison stays traced."""
    source = """
        import jax

        @jax.jit
        def pick(before, after):
            def is_new(a, b):
                if a is None:
                    return True
                return a[0] is not b[0]

            def grew(a, b):
                return a.sum() > b.sum()

            x = after if is_new(before, after) else before
            return after if grew(before, after) else x
        """
    # what a helper returns is shown with --preview (`traced_control_flow.evidence`)
    assert codes(source, preview=False) == []
    assert codes(source, preview=True) == [("JAX301", 15)]


def test_a_script_function_called_once_builds_its_jitted_wrapper_once():
    """jaxopt examples/deep_learning/distributed_flax_imagenet.py: `main` -> `train_and_evaluate`
    -> `initialize_model`, which jits a nested `init` and calls it. Called twice, the wrapper
    compiles per call and is reported."""
    script = """
        import jax
        import jax.numpy as jnp

        def initialize_model(key, shape):
            @jax.jit
            def init(k):
                return jax.random.normal(k, shape)
            return init(key)

        def train_and_evaluate(seed):
            params = initialize_model(jax.random.PRNGKey(seed), (3,))
            return jnp.sum(params)

        def main():
            print(train_and_evaluate(0))
        %s
        if __name__ == "__main__":
            main()
        """
    assert codes(script % "") == []
    twice = (
        "\n        def sweep():\n            return [initialize_model(jax.random.PRNGKey(0), (3,)) for _ in range(2)]\n"
    )
    assert codes(script % twice) == [("JAX202", 7)]
    # a library's importers may call `fit` again, but nothing here shows a second call: not reported
    library = (script % "").split("        def main")[0].replace(
        "def train_and_evaluate", "def fit"
    ) + "        fit(0)\n"
    assert codes(library) == []


def test_a_notebook_function_called_once_builds_its_jitted_wrappers_once():
    """google/evojax@acf5252475e4fbf47e0e3f7994c03de11dd3c4ca:examples/notebooks/TutorialTaskImplementation.ipynb (cell 10, dev pool
    labels): `render(task, solver, policy)` jits bound methods of its arguments and the notebook
    calls it once, at the top level of a cell: a notebook's top level runs once, like a script's.
    Called in a loop of a cell, each call compiles again and it is reported."""
    notebook = """
        # %% jaxfix: cell 1
        import jax
        import jax.numpy as jnp

        class Task:
            def step(self, x):
                return x + 1

        def render(task, x):
            step_fn = jax.jit(task.step)
            return step_fn(x)

        # %% jaxfix: cell 2
        CALLS
        """
    assert codes(notebook.replace("CALLS", "imgs = render(Task(), jnp.ones(3))")) == []
    looped = "for _ in range(3):\n            imgs = render(Task(), jnp.ones(3))"
    assert codes(notebook.replace("CALLS", looped)) == [("JAX202", 11)]
    # the same text without cell markers is a library module: importers may call `render` again,
    # but nothing here shows it, so it is not reported either
    library = (
        notebook.replace("CALLS", "imgs = render(Task(), jnp.ones(3))")
        .replace("# %% jaxfix: cell 1", "")
        .replace("# %% jaxfix: cell 2", "")
    )
    assert codes(library) == []


def test_a_jitted_callable_memoised_on_the_object_is_built_once():
    """AI-Hypercomputer/maxdiffusion@7cfb8801d41d1728f0232cd7ee59e900a151fecf:src/maxdiffusion/
    pipelines/z_image/z_image_pipeline.py:110-122 (held-out2 labels): `_decode_fn` jits a nested
    `decode` only when `self._jitted_decoder is None` and stores it; `__call__`'s loop reuses it.
    Without the guard, each call of the method in the loop stores a new jitted callable: reported."""
    source = """
        import jax

        class Pipeline:
            def __init__(self, scale):
                self.scale = scale
                self._jitted_decoder = None

            def _decode_fn(self):
                if self._jitted_decoder is None:
                    def decode(latents):
                        return latents / self.scale
                    self._jitted_decoder = jax.jit(decode)
                return self._jitted_decoder

            def __call__(self, batches):
                return [self._decode_fn()(b) for b in batches]

        def run(batches):
            pipe = Pipeline(2.0)
            out = []
            for b in batches:
                out.append(pipe._decode_fn()(b))
            return out
        """
    assert codes(source) == []
    unguarded = source.replace("                if self._jitted_decoder is None:\n", "                if True:\n")
    assert unguarded != source
    assert [code for code, _ in codes(unguarded)] == ["JAX202"]


def test_a_jitted_callable_memoised_behind_hasattr_is_built_once():
    """volodymyr-yelisieiev/ndswin-jax@18db39b src/ndswin/training/trainer.py:469 (heldout19,
    wrong): `train_epoch` jits `self.mixup_transform` only `if not hasattr(self, "_jitted_mixup")`,
    stores it and reuses it on every later step and epoch; `fit` calls `train_epoch` per epoch.
    `getattr(self, "f", None) is None` is the same guard. Without it, each trip re-wraps the one
    function the constructor stored (a cache hit, measured: 1 trace over 4 trips, also for a
    stored bound method): reported as a re-wrap (JAX203), not as a recompile."""
    source = """
        import jax

        class Trainer:
            def __init__(self, mixup):
                self.mixup_transform = mixup

            def train_epoch(self, loader, key):
                for batch in loader:
                    GUARD
                        self._jitted_mixup = jax.jit(self.mixup_transform)
                    batch = self._jitted_mixup(batch, key)
                return batch

            def fit(self, loader, key, epochs):
                for _ in range(epochs):
                    self.train_epoch(loader, key)
        """
    assert codes(source.replace("GUARD", 'if not hasattr(self, "_jitted_mixup"):')) == []
    assert codes(source.replace("GUARD", 'if getattr(self, "_jitted_mixup", None) is None:')) == []
    assert [code for code, _ in codes(source.replace("GUARD", "if True:"))] == ["JAX203"]
    assert [code for code, _ in codes(source.replace("GUARD", 'if not hasattr(self, "other"):'))] == ["JAX203"]


def test_the_truth_of_an_object_is_a_python_bool():
    """flax examples/imagenet/train.py: `if dynamic_scale:` on a DynamicScale-or-None whose
    `.value_and_grad` the step calls; gemma's `if sampler_state.forbidden_token_ids:` on a
    `Sequence[int] | None` field of an underscored struct class."""
    source = """
        from typing import Sequence

        import flax
        import jax
        import jax.numpy as jnp

        @flax.struct.dataclass
        class _State:
            tokens: jax.Array
            forbidden: Sequence[int] | None

        @jax.jit
        def step(state, dynamic_scale, x):
            if dynamic_scale:
                x = dynamic_scale.value_and_grad(jnp.sin)(x)
            if x.sum():
                x = -x
            return x

        @jax.jit
        def sample(state: _State):
            logits = state.tokens
            if state.forbidden:
                logits = logits.at[state.forbidden].set(-1.0)
            return logits
        """
    assert codes(source) == [("JAX301", 17)]  # `if x.sum():` only


def test_array_attributes_match_the_installed_jax():
    import jax
    import jax.numpy as jnp

    from jaxfix.analysis.static_values import ARRAY_ATTRIBUTES

    public = {n for n in dir(jax.Array) if not n.startswith("_")} | {
        n for n in dir(jnp.ones(2)) if not n.startswith("_")
    }
    assert public <= ARRAY_ATTRIBUTES, sorted(public - ARRAY_ATTRIBUTES)


def test_static_arguments_of_a_jit_over_vmap_are_the_functions_own():
    """flax examples/lm1b/train.py: `jax.jit(jax.vmap(predict_step, in_axes=...), static_argnums=(3, 4))`
    and `predict_step` builds `jnp.ones((n, max_decode_len))`."""
    source = """
        import jax
        import jax.numpy as jnp

        def predict_step(inputs, params, key, eos_id, max_decode_len):
            return jnp.ones((inputs.shape[0], max_decode_len)) * params

        def predict_traced(inputs, params, key, eos_id, max_len):
            return jnp.ones((inputs.shape[0], max_len)) * params

        jit_pred = jax.jit(jax.vmap(predict_step, in_axes=(0, None, 0, None, None)), static_argnums=(3, 4))
        jit_traced = jax.jit(jax.vmap(predict_traced, in_axes=(0, None, 0, None, None)))
        """
    assert codes(source) == [("JAX307", 9)]


def test_a_library_chain_from_train_and_evaluate_runs_once():
    """flax examples/imagenet/train.py (no `__main__` block; main.py calls train_and_evaluate):
    `initialized` is called once, from `train_and_evaluate`."""
    source = """
        import jax
        import jax.numpy as jnp

        def initialized(key, model):
            @jax.jit
            def init(*args):
                return model.init(*args)
            return init(key, jnp.ones((1, 4)))

        def train_and_evaluate(model, key):
            params = initialized(key, model)
            return params

        def evaluate(model, keys):
            return [initialized(key, model) for key in keys]
        """
    assert codes(source) == [("JAX202", 7)]  # reported while `evaluate` calls it per key
    # a second call site alone is no evidence of a second run (two one-shot set-up paths)
    assert codes(source.replace("[initialized(key, model) for key in keys]", "initialized(keys[0], model)")) == []
    assert codes(source.split("        def evaluate")[0]) == []


def test_auxiliary_data_and_python_properties_of_a_registered_class_are_static():
    """OTT's LinearProblem: `tree_flatten` returns `tau_a`/`tau_b` as auxiliary data, and
    `is_balanced -> bool` reads them; the Sinkhorn step branches on both. A child stays traced."""
    source = """
        import jax
        import jax.numpy as jnp

        @jax.tree_util.register_pytree_node_class
        class Problem:
            def __init__(self, a, tau_a=1.0):
                self.a = a
                self.tau_a = tau_a

            @property
            def is_balanced(self) -> bool:
                return self.tau_a == 1.0

            def tree_flatten(self):
                return [self.a], {"tau_a": self.tau_a}

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children, **aux)

        @jax.jit
        def center(f, prob: Problem):
            if prob.is_balanced:
                f = f - jnp.mean(f)
            if prob.tau_a == 1.0:
                f = f * 2
            if prob.a.sum() > 0:
                f = -f
            return f
        """
    assert codes(source) == [("JAX301", 28)]  # `if prob.a.sum() > 0:` only


def test_auxiliary_data_of_a_flatten_method_beside_its_unflatten_is_static():
    """lenstronomy/JAXtronomy@565f9a1 jaxtronomy/LensModel/Profiles/sie.py:95 (heldout22, wrong, and
    seven siblings): `_tree_flatten` builds `aux_data = {"NIE": self._nie}` and the class is
    registered with `register_pytree_node(SIE, SIE._tree_flatten, SIE._tree_unflatten)`; the jitted
    method branches on `self._nie`. A child (`self._gamma`) stays traced."""
    source = """
        import jax
        import jax.numpy as jnp
        from jax import jit, tree_util


        class SIE:
            def __init__(self, s_scale=1e-10, gamma=2.0, NIE=True):
                self._s_scale = s_scale
                self._gamma = gamma
                self._nie = NIE

            def _tree_flatten(self):
                children = (self._s_scale, self._gamma)
                aux_data = {"NIE": self._nie}
                return (children, aux_data)

            @classmethod
            def _tree_unflatten(cls, aux_data, children):
                return cls(*children, **aux_data)

            @jit
            def function(self, x):
                if self._nie:
                    return x * 2
                if self._gamma > 1:
                    return -x
                return x


        tree_util.register_pytree_node(SIE, SIE._tree_flatten, SIE._tree_unflatten)
        """
    assert codes(source) == [("JAX301", 26)]  # `if self._gamma > 1:` only
    assert SIE_runs(source)


def SIE_runs(source: str) -> bool:
    """The class as written runs under jit with the branch on its auxiliary data (real jax)."""
    import jax.numpy as jnp

    namespace: dict = {}
    exec(compile(textwrap.dedent(source).replace("        if self._gamma > 1:\n            return -x\n", ""), "sie.py", "exec"), namespace)
    out = namespace["SIE"](NIE=True).function(jnp.ones(2))
    return out.tolist() == [2.0, 2.0]


def test_a_python_annotated_parameter_reached_through_a_call_is_static():
    """OTT `SinkhornOutput.set_cost(..., use_danskin: bool)`, called from traced code: a working
    program passes a Python bool there; as a jit argument it is traced."""
    source = """
        import jax

        def cost(f, use_danskin: bool):
            return jax.lax.stop_gradient(f) if use_danskin else f

        @jax.jit
        def run(f, flag):
            return cost(f, flag)

        @jax.jit
        def entry(f, use_danskin: bool):
            return f if use_danskin else -f
        """
    assert codes(source) == [("JAX301", 13)]


def test_a_static_property_of_a_class_in_another_module(tmp_path):
    """OTT: `LinearProblem` (problems/linear_problem.py) keeps `tau_a` in `tree_flatten`'s aux data
    and `is_balanced` combines it with constants; the Sinkhorn step in another module branches
    on it. `is_symmetric -> bool` returns `jnp.all(...)`: its annotation is not taken on trust, and
    the finding is shown with `--preview` (the truth of an attribute this file does not show to be
    an array is the `truthiness` path: on first contact 0 real of 45 such tests on the blind pools,
    `codemods/traced_control_flow/evidence.py`)."""
    from typer.testing import CliRunner

    from jaxfix.cli import app

    pkg = tmp_path / "ot"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "problem.py").write_text(
        textwrap.dedent(
            """
        import jax
        import jax.numpy as jnp

        @jax.tree_util.register_pytree_node_class
        class Problem:
            def __init__(self, cost, tau_a=1.0):
                self.cost = cost
                self.tau_a = tau_a

            @property
            def is_balanced(self) -> bool:
                return self.tau_a == 1.0 and not self.tau_a < 0

            @property
            def is_symmetric(self) -> bool:
                return jnp.all(self.cost == self.cost.T)

            def tree_flatten(self):
                return (self.cost,), (self.tau_a,)

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children, *aux)
        """
        )
    )
    (pkg / "solver.py").write_text(
        textwrap.dedent(
            """
        import jax

        from ot.problem import Problem

        @jax.jit
        def step(f, prob: Problem):
            if prob.is_balanced:
                f = f - f.mean()
            if prob.is_symmetric:
                f = f * 2
            return f
        """
        )
    )
    import json

    def found(*options):
        result = CliRunner().invoke(app, ["check", "--no-cache", "--output-format", "json", *options, str(tmp_path)])
        return [(f["code"], Path(f["path"]).name, f["line"]) for f in json.loads(result.stdout)]

    assert found("--preview") == [("JAX301", "solver.py", 10)]
    assert found() == []


def test_vmap_axes_of_a_bound_method_count_after_self():
    """OTT costs.py: `jax.vmap(self.twist_operator, in_axes=[0, 0, None])` leaves `variable`
    unbatched (a Python bool), not `dual_vec`."""
    source = """
        import jax
        import jax.numpy as jnp

        class Cost:
            def twist(self, vec, dual_vec, variable):
                if variable:
                    return vec + dual_vec
                return vec - dual_vec

            def twist_all(self, xs, ys):
                return jax.vmap(self.twist, in_axes=[0, 0, None])(xs, ys, True)

            def twist_wrong(self, xs, ys):
                return jax.vmap(self.twist, in_axes=[0, None, 0])(xs, ys, jnp.ones(3) > 0)
        """
    assert codes(source.split("            def twist_wrong")[0]) == []
    assert codes(source) == [("JAX301", 7)]


def test_a_function_of_a_haiku_transform_is_one_object():
    """jraph examples/game_of_life.py: `jax.jit(net.apply)(params, cg)` in a loop, with
    `net = hk.without_apply_rng(hk.transform(net_fn))`: `net.apply` is a plain function (a cache
    hit each step, JAX203), not a fresh bound method that recompiles (JAX201). The fix wraps it
    once above the loop."""
    source = textwrap.dedent(
        """
        import haiku as hk
        import jax

        def main(graph):
            net = hk.without_apply_rng(hk.transform(lambda g: g))
            params = net.init(jax.random.PRNGKey(0), graph)
            for _ in range(3):
                graph = jax.jit(net.apply)(params, graph)
            return graph
        """
    )
    result = analyze(source, "life.py", Config(preview=True, select=("JAX2",)), fix=True)
    assert [f.code for f in result.findings] == ["JAX203"]
    assert (
        "    _apply_jit = jax.jit(net.apply)\n    for _ in range(3):\n        graph = _apply_jit(params, graph)\n"
        in result.fixed_source
    )


def test_a_nested_helper_reading_its_enclosing_function_stays_traced():
    """A nested helper is asked of the static-helper oracle only when it reads nothing of its
    enclosing function: `check(a)` below returns `x.sum() > 0`, traced through the closure."""
    source = """
        import jax

        @jax.jit
        def f(x, y):
            def check(a):
                return x.sum() > 0

            def same(a, b):
                return a is b

            z = y if same(x, y) else x
            return z if check(y) else -z
        """
    # what a helper returns is shown with --preview (`traced_control_flow.evidence`)
    assert codes(source, preview=False) == []
    assert codes(source, preview=True) == [("JAX301", 13)]
    # the enclosing function's `x` shadows a module-level `x`: the helper still reads the traced one
    assert codes("\n        x = 0.0\n" + source, preview=True) == [("JAX301", 15)]


def test_keyword_line_is_the_line_ast_gives_a_top_level_definition():
    """`RuleContext.keyword_line` reads the `class`/`def` line from the text (no position render);
    it must agree with `ast`'s `lineno` past decorators, comments and blank lines."""
    import ast

    import libcst as cst

    from jaxfix.rulebase import RuleContext

    source = textwrap.dedent(
        '''
        """Doc mentioning class Model."""
        import dataclasses

        # a comment: class Model is below


        @dataclasses.dataclass(
            frozen=True,
        )
        class Model:
            x: int = 1

        async def fetch(): pass

        class Model:  # the same name again
            pass
        '''
    )
    ctx = RuleContext(source, "m.py")
    defs = [s for s in ctx.module.body if isinstance(s, (cst.ClassDef, cst.FunctionDef))]
    expected = [n.lineno for n in ast.parse(source).body if isinstance(n, (ast.ClassDef, ast.AsyncFunctionDef))]
    assert [ctx.keyword_line(d) for d in defs] == expected == [11, 14, 16]


def test_a_once_called_function_whose_name_is_also_a_word_in_strings():
    """jraph examples: `def train(...)` builds jitted nested defs, `main` calls it once, and
    `logging.info("train loss")` spells the name in strings too."""
    source = """
        import logging

        import jax

        def train(steps):
            @jax.jit
            def update(x):
                return x * 0.9

            x = 1.0
            for _ in range(steps):
                x = update(x)
            logging.info("train loss %s, train done", x)
            return x

        def main():
            return train(3)

        if __name__ == "__main__":
            main()
        """
    assert codes(source) == []


def test_an_optimizer_update_whose_result_is_used_is_no_container_mutation():
    """A trainer class holding its optax optimizer (research scripts, the flax and optax guides):
    `updates, state = self.opt.update(grads, state)` returns values, which a list's or a dict's
    `update` never does; `self.history.append(loss)` on the same object still stores a tracer."""
    source = """
        from functools import partial

        import jax
        import optax


        class Trainer:
            def __init__(self, lr):
                self.opt = optax.adam(lr)
                self.history = []

            @partial(jax.jit, static_argnums=0)
            def step(self, params, opt_state, grads, loss):
                updates, opt_state = self.opt.update(grads, opt_state)
                %s
                return optax.apply_updates(params, updates), opt_state


        trainer = Trainer(1e-3)
        """
    assert codes(source % "pass") == []
    assert codes(source % "self.history.append(loss)") == [("JAX404", 16)]


def test_a_stub_property_leaves_the_decision_to_its_overrides():
    """mlprt/feedbax@ff783a62:feedbax/task.py: `AbstractTask.n_validation_trials` is an abstract
    stub, and the override returns a product of Python int fields, so `jr.split(key,
    self.n_validation_trials)` in `eval_with_loss` (under `eqx.filter_jit`) gets a Python int.
    The twin's override returns a traced sum: still reported."""
    source = """
        from abc import abstractmethod

        import equinox as eqx
        import jax
        import jax.numpy as jnp
        import jax.random as jr


        class AbstractTask(eqx.Module):
            @property
            @abstractmethod
            def n_validation_trials(self) -> int:
                \"\"\"Number of trials in the validation set.\"\"\"
                ...

            def eval_with_loss(self, key):
                return jr.split(key, self.n_validation_trials)

            @eqx.filter_jit
            def eval(self, key):
                return self.eval_with_loss(key)


        class SimpleReaches(AbstractTask):
            sizes: jax.Array
            eval_n_directions: int = 7
            eval_grid_n: int = 1

            @property
            def n_validation_trials(self) -> int:
                return %s
        """
    assert codes(source % "self.eval_n_directions * self.eval_grid_n**2") == []
    assert codes(source % "jnp.sum(self.sizes)") == [("JAX307", 18)]


def test_an_unpassed_enum_default_of_a_jitted_method_is_a_python_value():
    """octo-models/octo@241fb351:octo/model/octo_model.py: `sample_actions` is jitted with
    `normalization_type: NormalizationType = NormalizationType.NORMAL`, which no call passes: jit
    leaves it the enum member, and `if normalization_type == NormalizationType.NORMAL:` runs in
    Python. The twin, a call that passes it (traced there), is reported."""
    source = """
        import enum
        from functools import partial

        import jax
        import jax.numpy as jnp


        class NormalizationType(str, enum.Enum):
            NORMAL = "normal"
            BOUNDS = "bounds"


        class Model:
            @partial(jax.jit, static_argnames=("train",))
            def sample_actions(self, obs, stats=None, normalization_type: NormalizationType = NormalizationType.NORMAL, train=False):
                action = obs * 2
                if stats is not None:
                    if normalization_type == NormalizationType.NORMAL:
                        action = action * stats["std"] + stats["mean"]
                return action

            def act(self, obs, stats, kind):
                return self.sample_actions(obs, stats%s)
        """
    assert codes(source % "") == []
    assert codes(source % ", normalization_type=kind") == [("JAX301", 19)]


def test_an_unpassed_default_of_a_def_nested_in_untraced_code_is_a_python_value():
    """avitai/opifex@9f906dc tests/core/physics/test_advanced_pdes.py:
    396-405: a test loop defines `@jax.jit def jitted_residual(x, _pde_name=pde_name, _pde_fn=...)`
    and calls `jitted_residual(x)`; the defaults are evaluated by the (untraced) test function, so
    jit sees the Python string. The twin nests the same def in a jitted function, where the name
    holds a tracer: reported."""
    source = """
        import jax
        import jax.numpy as jnp


        def check(x, names):
            for name in names:
                @jax.jit
                def residual(x, _name=name):
                    if _name == "maxwell":
                        return x * 2
                    return x

                residual(x)
        """
    # (the def made on every trip is JAX201's finding, real and beside the point here)
    assert [c for c in codes(source) if c[0].startswith("JAX3")] == []
    import jax.numpy as jnp
    from fixture_cases import load_as_module

    module = load_as_module(Path("pdes.py"), textwrap.dedent(source))
    module.check(jnp.ones(2), ["maxwell", "heat"])  # runs: the strings are Python values
    twin = source.replace(
        "        def check(x, names):\n            for name in names:",
        "        @jax.jit\n        def check(x, name):\n            if True:",
    )
    assert twin != source
    assert [c for c in codes(twin) if c[0].startswith("JAX3")] == [("JAX301", 11)]


def test_an_item_store_into_an_nnx_variable_attribute_is_the_nnx_update():
    """avitai/opifex@9f906dc src/opifex/optimization/control/mpc.py:459, 530: the module keeps
    `self.warm_start_cache = nnx.Variable(jnp.zeros(n))` and updates it with
    `self.warm_start_cache[...] = result.solution` in the jitted step: `Variable.__setitem__`
    replaces the Variable's value (flax >= 0.11), under `nnx.jit` too. The twin keeps a raw array
    attribute, which is immutable: reported."""
    source = """
        import jax.numpy as jnp
        from flax import nnx


        class Controller(nnx.Module):
            def __init__(self, n: int):
                self.cache = nnx.Variable(jnp.zeros(n))

            @nnx.jit
            def step(self, x):
                self.cache[...] = self.cache[...] + x
                return self.cache[...]
        """
    assert [c for c in codes(source) if c[0] == "JAX403"] == []
    import jax.numpy as jnp
    from fixture_cases import load_as_module

    module = load_as_module(Path("mpc.py"), textwrap.dedent(source))
    controller = module.Controller(3)
    controller.step(jnp.ones(3))
    assert float(controller.step(jnp.ones(3))[0]) == 2.0  # the Variable kept the first update
    twin = source.replace("self.cache = nnx.Variable(jnp.zeros(n))", "self.cache = jnp.zeros(n)")
    assert [c for c in codes(twin) if c[0] == "JAX403"] == [("JAX403", 12)]


def test_static_argnames_from_a_module_constant_are_static():
    """jsw7460/sb3_jax (heldout13 pin) offline_baselines_jax/td3/core.py:11,119,158:
    `@functools.partial(jax.jit, static_argnames=tuple(STATIC_ARGNAMES))` with the module's
    constant tuple naming `actor_update_cond`, so `if actor_update_cond:` is on a static bool; the
    twin, whose constant leaves it out, is still reported."""
    source = """
        import functools

        import jax

        STATIC_ARGNAMES = (
            "gamma",
            "actor_update_cond",
        )


        @functools.partial(jax.jit, static_argnames=tuple(STATIC_ARGNAMES))
        def update_td3(x, gamma, actor_update_cond):
            if actor_update_cond:
                x = x * gamma
            return x
        """
    assert codes(source) == []
    twin = source.replace('"actor_update_cond",\n', "")
    assert codes(twin) == [("JAX301", 13)]


def test_a_rebuild_per_command_of_an_interactive_loop_is_not_reported():
    """arriemeijer-creator/JAX-differentiable-CFD@<heldout27> baseline_clean.py:600 (wrong):
    `set_fixed_dt` re-jits the solver's step when a person types `f 0.001` at the `input()` prompt
    of `run_interactive`: one rebuild per command, not per step of a hot loop. The same loop fed
    by an iterator of commands is a loop the program drives, and is reported."""
    source = """
        import jax
        import jax.numpy as jnp


        class Solver:
            def __init__(self, dt):
                self.dt = dt
                self._step_jit = jax.jit(self._step)

            def _step(self, u):
                return u + self.dt * jnp.sin(u)

            def set_fixed_dt(self, dt):
                self.dt = dt
                self._step_jit = jax.jit(self._step)

            def run_interactive(self, u):
                while True:
                    cmd = input("Command: ").strip()
                    if cmd.startswith("f"):
                        self.set_fixed_dt(float(cmd.split()[1]))
                    elif cmd == "q":
                        break
                    u = self._step_jit(u)
                return u
        """
    assert codes(source) == []
    driven = source.replace('cmd = input("Command: ").strip()', "cmd = next(commands)").replace(
        "def run_interactive(self, u):", "def run_interactive(self, u, commands):"
    )
    assert codes(driven) == [("JAX202", 16)]


def test_jit_of_an_object_the_constructor_stored_is_one_function():
    """lkhromykh/jax-peract@<heldout27> peract/utils/clip.py:51 (wrong): `encode` calls
    `jax.jit(self._model)(**tokens)`, where `__init__` stored the model on the instance: the same
    object every call, which jit's cache finds again (run here: 3 calls, 1 trace). A method of that
    name is a fresh bound method per call (reported), and so is an attribute a method stores anew
    on each call."""
    source = """
        import jax
        import jax.numpy as jnp


        class Model:
            traces = 0

            def __call__(self, x):
                Model.traces += 1
                return jnp.tanh(x)


        class Encoder:
            def __init__(self):
                self._model = Model()

            def encode(self, x):
                return jax.jit(self._model)(x)
        """
    assert codes(source) == []
    ns: dict = {}
    exec(textwrap.dedent(source), ns)
    encoder = ns["Encoder"]()
    for _ in range(3):
        encoder.encode(ns["jnp"].ones(3))
    assert ns["Model"].traces == 1
    method = source.replace("                self._model = Model()\n", "                self.inner = Model()\n").replace(
        "            def encode(self, x):", "            def _model(self, x):\n                return self.inner(x)\n\n            def encode(self, x):"
    )
    assert [code for code, _ in codes(method)] == ["JAX202"]
    per_call = source.replace(
        "            def encode(self, x):\n", "            def encode(self, x):\n                self._model = Model()\n"
    )
    assert [code for code, _ in codes(per_call)] == ["JAX202"]


def test_jit_of_a_static_method_read_off_its_class_is_one_function():
    """i-m-iron-man/Foragax@<heldout28> examples/basic/wolf_sheep_grass/sim.ipynb cell 8:150-151
    (JAX202, wrong: "fresh bound method"): `jax.jit(Ecosystem.add_animals)(...)` on every step reads
    a `@staticmethod` off the class, the same function object each time (run here: 20 re-wraps, 1
    trace): a re-wrap (JAX203), not a recompile. A `@classmethod` read off the class is a fresh
    bound method on every access and traces again each trip (run here: 20 traces): JAX201."""
    source = """
        import jax
        import jax.numpy as jnp


        class Ecosystem:
            traces = 0

            @staticmethod
            def add_animals(x):
                Ecosystem.traces += 1
                return x + 1

            @classmethod
            def spawn(cls, x):
                cls.traces += 1
                return x * 2


        def run(x, method):
            for step in range(20):
                x = jax.jit(getattr(Ecosystem, method))(x)
            return x


        def simulate(x):
            for step in range(20):
                x = jax.jit(Ecosystem.add_animals)(x)
            return x
        """
    assert codes(source) == [("JAX203", 28)]
    assert codes(source.replace("Ecosystem.add_animals)(x)", "Ecosystem.spawn)(x)")) == [("JAX201", 28)]
    ns: dict = {}
    exec(textwrap.dedent(source), ns)
    for method, traces in (("add_animals", 1), ("spawn", 20)):
        ns["Ecosystem"].traces = 0
        ns["run"](ns["jnp"].ones(3), method)
        assert ns["Ecosystem"].traces == traces, method


def test_jit_of_a_static_method_read_off_self_is_one_function():
    """WiseLabCMU/pitot@<heldout29> pitot/linear_scaling.py:117 (JAX201, wrong: "fresh bound
    method"): `jax.jit(self.iter)(problem, soln)` on every iteration of `fit`, `iter` a
    `@staticmethod` of the class: read off the instance it is the plain function (run here: 20
    re-wraps, 1 trace), a re-wrap (JAX203). A plain method read off `self` is a fresh bound method
    each access and traces again each trip (run here: 20 traces): JAX201."""
    source = """
        import jax
        import jax.numpy as jnp


        class Solver:
            traces = 0

            @staticmethod
            def iter(x):
                Solver.traces += 1
                return x + 1

            def step(self, x):
                Solver.traces += 1
                return x * 2

            def fit(self, x):
                for _ in range(20):
                    x = jax.jit(self.iter)(x)
                return x
        """
    assert codes(source) == [("JAX203", 20)]
    assert codes(source.replace("jax.jit(self.iter)(x)", "jax.jit(self.step)(x)")) == [("JAX201", 20)]
    for method, traces in (("iter", 1), ("step", 20)):
        ns: dict = {}
        exec(textwrap.dedent(source.replace("jax.jit(self.iter)(x)", f"jax.jit(self.{method})(x)")), ns)
        ns["Solver"]().fit(ns["jnp"].ones(3))
        assert ns["Solver"].traces == traces, method
