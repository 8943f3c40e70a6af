"""Static facts the traced-value analysis knows (issue #29, shapes 2), each from real code of the
blind development pool or of repositories read for it (source named per case), with the buggy
variant beside it still reported. Facts are read by the libcst analysis and the stdlib screen
from one table (`static_values`, `transforms`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.project import build_project_index
from fixture_cases import run_jax3 as run


def lines(result) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in result.findings]


def project(tmp_path: Path, files: dict[str, str]) -> list[str]:
    out = []
    for name, text in {"pkg/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        out.append(str(path))
    return out


def project_findings(paths: list[str], name: str) -> list:
    index = build_project_index(paths, lazy=True)
    path = next(p for p in paths if p.endswith(name))
    config = Config(preview=True, select=("JAX3",))
    return analyze(Path(path).read_text(), path, config, project=index).findings


LIGHT_CURVE = """
import jax.numpy as jnp


def light_curve(deg, theta):
    if deg == 0:
        return jnp.ones_like(theta)
    return jnp.cos(deg * theta)
"""


def test_an_argument_vmap_leaves_unmapped_stays_a_python_value_across_modules(tmp_path):
    # exoplanet-dev/jaxoplanet@6972b779:tests/starry/light_curve_test.py vmaps
    # `surface_light_curve` with `in_axes=(None, ..., 0)`: the surface (and its int degrees) is
    # passed through as it is, so `if surface.ydeg == 0:` in src/jaxoplanet/starry/light_curves.py
    # is a Python `if` (37 JAX3xx false alarms there before)
    unmapped = """
        import jax
        import jax.numpy as jnp
        from pkg.lc import light_curve


        def test_vmap():
            return jax.vmap(light_curve, in_axes=(None, 0))(2, jnp.linspace(0, 1, 5))
    """
    paths = project(tmp_path, {"pkg/lc.py": LIGHT_CURVE, "tests/test_lc.py": unmapped})
    assert project_findings(paths, "pkg/lc.py") == []
    # buggy: the degree is mapped too, a traced value under vmap; traced only by the other
    # module, a bare parameter is not reported (`proven_traced`); the one-module twin below is
    mapped = unmapped.replace("in_axes=(None, 0)", "in_axes=(0, 0)").replace("(2,", "(jnp.arange(5),")
    paths = project(tmp_path, {"pkg/lc.py": LIGHT_CURVE, "tests/test_lc.py": mapped})
    assert project_findings(paths, "pkg/lc.py") == []


def test_an_argument_vmap_leaves_unmapped_stays_a_python_value_in_one_module():
    src = """
        import jax
        import jax.numpy as jnp

        def light_curve(deg, theta):
            if deg == 0:
                return jnp.ones_like(theta)
            return jnp.cos(deg * theta)

        flux = jax.vmap(light_curve, in_axes=(None, 0))(2, jnp.linspace(0, 1, 5))
    """
    assert lines(run(src)) == []
    assert lines(run(src.replace("in_axes=(None, 0)", "in_axes=(0, 0)"))) == [("JAX301", 6)]


def test_pmap_static_broadcasted_argnums_are_static(tmp_path):
    # the pmap spelling of static arguments (brax's training loops pass `num_steps` so); across
    # modules too
    src = """
        import jax

        def step(x, n):
            for _ in range(n):
                x = x * 2
            return x

        run = jax.pmap(step, axis_name="i", static_broadcasted_argnums=(1,))
    """
    assert lines(run(src)) == []
    assert lines(run(src.replace("static_broadcasted_argnums=(1,)", "donate_argnums=(0,)"))) == [("JAX303", 5)]
    caller = """
        import jax
        from pkg.steps import step

        run = jax.pmap(step, axis_name="i", static_broadcasted_argnums=(1,))
    """
    body = """
        def step(x, n):
            for _ in range(n):
                x = x * 2
            return x
    """
    paths = project(tmp_path, {"pkg/steps.py": body, "pkg/train.py": caller})
    assert project_findings(paths, "pkg/steps.py") == []
    # buggy: `n` traced, but only by the other module's pmap: a bare parameter is not reported
    # there (`proven_traced`); the one-module twin above is
    paths = project(tmp_path, {"pkg/steps.py": body, "pkg/train.py": caller.replace("static_broadcasted_argnums", "donate_argnums")})
    assert project_findings(paths, "pkg/steps.py") == []


def test_dict_keys_are_static_values_of_a_traced_mapping():
    # google/brax@0b96d056:brax/training/agents/ppo/train.py:156 (`_random_translate_pixels`)
    src = """
        import jax

        @jax.jit
        def translate(obs, key):
            out = {}
            for k_view, v_view in obs.items():
                if k_view.startswith("pixels/"):
                    out[k_view] = v_view * 2
            return {**obs, **out}

        @jax.jit
        def by_key(obs):
            total = 0.0
            for k in obs.keys():
                if k == "reward":
                    total = total + obs[k].sum()
            return total
    """
    assert lines(run(src)) == []
    # buggy: the value, not the key, decides
    buggy = """
        import jax

        @jax.jit
        def translate(obs):
            out = {}
            for k_view, v_view in obs.items():
                if v_view.sum() > 0:
                    out[k_view] = v_view * 2
            return out
    """
    assert lines(run(buggy)) == [("JAX301", 8)]


def test_keys_paired_through_zip_of_items_are_static():
    # instadeepai/jumanji@590005b0:jumanji/environments/packing/bin_pack/env.py:598
    src = """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def prune(ems, masks):
            n = 0.0
            for (direction, a), (_, ma) in zip(ems.items(), masks.items()):
                for (alt_direction, b), (_, mb) in zip(ems.items(), masks.items(), strict=False):
                    inc = a[:, None] <= b[None, :]
                    if direction == alt_direction:
                        inc = inc.at[jnp.arange(3), jnp.arange(3)].set(False)
                    n = n + (inc & ma & mb).sum()
            return n
    """
    assert lines(run(src)) == []
    buggy = src.replace("if direction == alt_direction:", "if (a == b).all():")
    assert [code for code, _ in lines(run(buggy))] == ["JAX301"]


def test_comparisons_with_string_literals_compare_strings():
    # key names compared with a literal, as brax@0b96d056:brax/training/agents/bc/train.py:322 does
    # with dict keys; here a key path element's name
    src = """
        import jax

        @jax.jit
        def pick(tree):
            out = []
            for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
                name = path[-1].key
                if name == "bias":
                    continue
                out.append(leaf)
            return out
    """
    assert lines(run(src)) == []
    # a string handed to a jitted function as a traced argument is still reported (it must be static)
    buggy = """
        import jax

        @jax.jit
        def f(x, mode: str):
            if mode == "neg":
                return -x
            return x

        y = f(1.0, "neg")
    """
    assert [code for code, _ in lines(run(buggy))] == ["JAX301"]


def test_a_python_number_conversion_is_reported_once_at_the_conversion():
    # exoplanet-dev/jaxoplanet@6972b779:src/jaxoplanet/starry/core/rotation.py:28 converts
    # `ydeg = int(ydeg)` (guarded by `except TypeError`) and then loops `range(ydeg + 1)`: after the
    # conversion the name holds a Python int; on a tracer the conversion itself fails (JAX304)
    src = """
        import jax
        import jax.numpy as jnp

        def rotate(ydeg, theta):
            try:
                ydeg = int(ydeg)
            except TypeError as e:
                raise TypeError("ydeg must be an integer") from e
            out = []
            for ell in range(ydeg + 1):
                out.append(jnp.ones(2 * ell + 1) * theta)
            return out

        f = jax.jit(rotate, static_argnums=0)
    """
    assert lines(run(src)) == []
    unguarded = """
        import jax

        @jax.jit
        def f(x, n):
            n = int(n)
            for _ in range(n):
                x = x * 2
            return x
    """
    assert lines(run(unguarded)) == [("JAX304", 6)]


def test_the_truth_of_a_set_or_of_a_mapping_merged_into_a_dict_is_its_length():
    # instadeepai/jumanji@590005b0:jumanji/training/evaluator.py:119 (`if extras:` then
    # `eval_metrics.update(extras)`) and google-deepmind/penzai@aac7808a:penzai/core/variables.py:336
    # (`unseen = set(substitution.keys()) - seen; if unseen: raise ...`)
    src = """
        import jax

        @jax.jit
        def evaluate(state, substitution):
            metrics = {"ret": state.ret}
            extras = state.timestep.extras
            if extras:
                metrics.update(extras)
            seen = set()
            unseen = set(substitution.keys()) - seen
            if unseen:
                raise ValueError(f"unused: {unseen}")
            return metrics
    """
    assert lines(run(src)) == []
    # buggy: a traced flag of the same state (an array operation shows it is one: the class of
    # `state` is not in the file, so a bare `state.timestep.done` could be aux data)
    buggy = src.replace("if extras:", "if jax.numpy.any(state.timestep.done):")
    assert [code for code, _ in lines(run(buggy))] == ["JAX301"]


def test_a_field_marked_static_through_dataclass_metadata_is_static_on_any_object():
    # google-deepmind/penzai@aac7808a:penzai/core/named_axes.py:1585 (`data_axis_for_name: dict[...] =
    # dataclasses.field(metadata={"pytree_node": False})`) read at named_axes.py:259-290
    src = """
        import dataclasses
        import jax

        @dataclasses.dataclass(frozen=True)
        class View:
            data_axis_for_name: dict = dataclasses.field(metadata={"pytree_node": False})
            data_shape: tuple = dataclasses.field(metadata={"pytree_node": False})
            data_array: jax.Array

        @jax.jit
        def step(views):
            out = []
            name = "batch"
            for view in views:
                axis = view.data_axis_for_name[name]
                if axis < 2:
                    out.append(view.data_shape[:axis] + view.data_shape[axis + 1 :])
            return out
    """
    assert lines(run(src)) == []
    # buggy: the array field, not the aux data, decides
    buggy = src.replace("if axis < 2:", "if jax.numpy.sum(view.data_array) < 2:")
    assert [code for code, _ in lines(run(buggy))] == ["JAX301"]


def test_a_jax_dataclasses_static_annotation_marks_aux_data():
    # ami-iit/jaxsim@98939044f7094b40d4bfeec25a002a4d536df0c6:src/jaxsim/api/kin_dyn_parameters.py:786,1090 (`body:
    # Static[tuple[int, ...]]` of a jax_dataclasses pytree, read with `np.array` under the jitted
    # `update_hw_parameters`: a Python tuple there; the parameter is annotated `jtp.Vector`)
    src = """
        import dataclasses

        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax_dataclasses import Static


        class ContactParameters:
            body: Static[tuple[int, ...]] = dataclasses.field(default_factory=tuple)
            point: jax.Array = dataclasses.field(default_factory=lambda: jnp.array([]))


        @jax.jit
        def scaled_points(original_contact_params: jax.Array, factors):
            parent_link_indices = np.array(original_contact_params.body)
            return original_contact_params.point * factors[parent_link_indices]
    """
    config = Config(preview=True, select=("JAX402",))
    assert lines(analyze(textwrap.dedent(src), "m.py", config)) == []
    # buggy: the array field under NumPy
    buggy = src.replace("np.array(original_contact_params.body)", "np.array(original_contact_params.point)")
    assert lines(analyze(textwrap.dedent(buggy), "m.py", config)) == [("JAX402", 17)]


def test_iterating_a_name_that_holds_a_mapping_yields_its_keys():
    # octo-models/octo@241fb3514b7c40957a86d869fecb7c7fc353f540:octo/model/octo_model.py:518-549
    # (`_verify_shapes` under the jitted `run_transformer`: `pytree_flat = flatten_dict(pytree)`,
    # read with `.keys()`, iterated in a dict comprehension of shape strings that is logged)
    src = """
        import logging

        import flax
        import jax


        def _verify_shapes(pytree, name, example_pytree):
            pytree_flat = flax.traverse_util.flatten_dict(pytree)
            example_pytree_flat = flax.traverse_util.flatten_dict(example_pytree)
            if set(pytree_flat.keys()) != set(example_pytree_flat.keys()):
                logging.warning("%s: keys differ", name)
            mismatched_keys = {
                k: f"{pytree_flat[k].shape} != {example_pytree_flat[k].shape}"
                for k in pytree_flat
                if k in example_pytree_flat and pytree_flat[k].shape != example_pytree_flat[k].shape
            }
            if mismatched_keys:
                logging.error("'%s' contains mismatched shapes: %s", name, mismatched_keys)


        @jax.jit
        def run_transformer(observations, example):
            _verify_shapes(observations, "observations", example)
            return observations
    """
    config = Config(preview=True, select=("JAX401",))
    assert lines(analyze(textwrap.dedent(src), "m.py", config)) == []
    # buggy: the leaves themselves are logged
    buggy = src.replace('f"{pytree_flat[k].shape} != {example_pytree_flat[k].shape}"', "pytree_flat[k]")
    assert lines(analyze(textwrap.dedent(buggy), "m.py", config)) == [("JAX401", 19)]


def test_a_static_field_helper_is_recognised_by_what_it_returns():
    # the helper form of google/neural-tangents@c17e770b:neural_tangents/_src/utils/dataclasses.py:122
    # (`def field(...): return dataclasses.field(metadata=...)`), here with a literal mark and under
    # another name: recognised by its `return`, not by a list of names
    src = """
        import dataclasses
        import jax

        def config_value(**kwargs):
            return dataclasses.field(metadata={"static": True}, **kwargs)

        def flag(**kwargs):
            return config_value(**kwargs)

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Params:
            w: jax.Array
            n_layers: int = config_value(default=2)
            residual: object = flag(default=True)

        @jax.jit
        def apply(p: Params, x):
            for _ in range(p.n_layers):
                x = x @ p.w
                if p.residual:
                    x = x + 1.0
            return x
    """
    assert lines(run(src)) == []
    # buggy: a helper that does not mark the field static leaves it a traced leaf
    # (`n_layers: int` stays Python config by its annotation; `residual: object` becomes a leaf)
    buggy = src.replace('metadata={"static": True}, ', "")
    assert sorted(code for code, _ in lines(run(buggy))) == ["JAX301"]


def test_a_comparison_with_a_key_path_entry_compares_pytree_structure():
    # google-deepmind/penzai@aac7808a:penzai/deprecated/v1/toolshed/interleave_intermediates.py:155
    # (`assert tell.keypath[-1] == jax.tree_util.GetAttrKey("shape_logger")` inside a jitted `go`)
    src = """
        import jax

        def go(handled, arg):
            _, out_tells = handled(arg)
            values = {}
            for tell in out_tells:
                assert tell.keypath[-1] == jax.tree_util.GetAttrKey("shape_logger")
                values[tell.keypath[:-1]] = tell.value
            return values

        go_jit = jax.jit(go, static_argnums=0)
    """
    assert lines(run(src)) == []
    # buggy: the asserted value is the traced payload
    buggy = src.replace(
        'assert tell.keypath[-1] == jax.tree_util.GetAttrKey("shape_logger")', "assert jax.numpy.all(tell.value > 0)"
    )
    assert [code for code, _ in lines(run(buggy))] == ["JAX305"]


def test_a_parameter_annotated_as_a_callable_returning_a_python_value_returns_one():
    # google-deepmind/penzai@aac7808a:penzai/core/variables.py:244 (`predicate: Callable[[AbstractVariable],
    # bool] | None`, defaulted to `lambda _: True`, then `if isinstance(leaf, AbstractVariable) and
    # predicate(leaf):` over the leaves of a traced tree)
    src = """
        from typing import Callable
        import jax

        def unbind(tree, predicate: Callable[[object], bool] | None = None):
            if predicate is None:
                predicate = lambda _: True
            out = []
            for leaf in jax.tree_util.tree_leaves(tree):
                if predicate(leaf):
                    out.append(leaf)
            return out

        run = jax.jit(unbind, static_argnums=1)
    """
    assert lines(run(src)) == []
    # buggy: a callable that returns arrays (annotated so) gives a traced condition
    buggy = src.replace("Callable[[object], bool]", "Callable[[object], jax.Array]")
    # a helper's result: shown with --preview (traced_control_flow.evidence)
    assert [code for code, _ in lines(run(buggy, preview=True))] == ["JAX301"]


def test_a_lax_branch_called_with_fewer_arguments_runs_its_defaults():
    # written for this test from issue #29's list (no dev-pool site had it): a `lax.cond` branch
    # called with one operand runs its further parameters with their Python defaults; given the
    # operand as well (the buggy variant), the parameter is traced and now reported (missed before)
    src = """
        import jax
        import jax.numpy as jnp
        from jax import lax

        def smooth(x, n=3):
            for _ in range(n):
                x = 0.5 * (x + jnp.roll(x, 1))
            return x

        def keep(x, n=3):
            return x

        @jax.jit
        def step(p, x):
            return lax.cond(p > 0, smooth, keep, x)
    """
    assert lines(run(src)) == []
    buggy = src.replace("def step(p, x):", "def step(p, x, k):").replace("smooth, keep, x)", "smooth, keep, x, k)")
    assert lines(run(buggy)) == [("JAX303", 7)]


def test_a_static_element_of_a_tuple_a_helper_returns_beside_a_traced_one_is_static():
    # written for this test from issue #29's list ("a static element of a tuple returned beside a
    # traced one"): the module's own helper returns a sum and a shape entry
    src = """
        import jax
        import jax.numpy as jnp

        def prepare(x):
            return jnp.sum(x), x.shape[0]

        @jax.jit
        def f(x):
            total, n = prepare(x)
            out = []
            for i in range(n):
                out.append(total * i)
            return jnp.stack(out)
    """
    assert lines(run(src)) == []
    # buggy: the traced element is the loop bound
    buggy = src.replace("for i in range(n):", "for i in range(total):")
    # a helper's result: shown with --preview (traced_control_flow.evidence)
    assert [code for code, _ in lines(run(buggy, preview=True))] == ["JAX303"]


def test_a_not_a_tracer_guard_through_the_module_helper_rules_out_a_tracer():
    # issue #29's list: `if not is_traced(x):` where the helper does `isinstance(x, jax.core.Tracer)`
    # (the helper form of equinox's `error_if`, `if not isinstance(pred, jax.core.Tracer)`, which
    # guards.py already knew written out); recognised by the helper's body, not its name
    src = """
        import jax
        import jax.numpy as jnp

        def concrete_tracer(x):
            return isinstance(x, jax.core.Tracer)

        @jax.jit
        def clip(x, limit):
            if not concrete_tracer(limit):
                limit = float(limit)
                if limit < 0:
                    raise ValueError("negative limit")
            return jnp.minimum(x, limit)

        @jax.jit
        def shift(x, flag):
            if not concrete_tracer(flag):
                if flag:
                    x = x + 1.0
            return x
    """
    assert lines(run(src)) == []
    # buggy: a helper that tests something else guards nothing
    buggy = src.replace("return isinstance(x, jax.core.Tracer)", "return isinstance(x, float)")
    assert sorted(code for code, _ in lines(run(buggy))) == ["JAX301", "JAX304"]


def test_printing_the_abstract_type_of_a_traced_value_is_a_trace_time_print():
    # `print(f"{jax.typeof(x) = }")` inside jit is how JAX's own docs show a tracer's type ("JAX
    # sharp bits"/explicit-sharding tutorial): the value printed is a Python object, and a
    # `jax.debug.print` of it would fail (a type is not an array). The value itself is still reported.
    src = textwrap.dedent(
        """
        import jax

        @jax.jit
        def f(y):
            print(f"{jax.typeof(y) = }")
            print("aval", jax.core.get_aval(y))
            print("value", y)
            return y * 2
        """
    )
    result = analyze(src, "t.py", Config(preview=True, select=("JAX4",)), fix=True)
    assert [(f.code, f.line) for f in result.findings] == [("JAX401", 8)]


def test_the_body_of_an_isinstance_test_for_a_concrete_class_sees_no_tracer():
    # stanford-crfm/levanter@9263f81e8b453241332c2c0b2d2001bfb2d2241c:src/levanter/analysis/visualization.py:303:
    # a jitted `_concatenate` whose NumPy branch runs only when the elements are NumPy arrays (dead
    # under the trace: a tracer is never an `np.ndarray`); JAX402's fix there was safe and wrong
    src = """
        from functools import partial

        import jax
        import jax.numpy as jnp
        import numpy as np

        @partial(jax.jit, out_shardings=None)
        def concatenate(x):
            if isinstance(x[0], np.ndarray):
                return np.concatenate(x)
            return jnp.concatenate(x)

        @jax.jit
        def scale(x, k):
            if isinstance(k, (int, float)):
                if k > 1:
                    return x * k
            return x
    """
    result = analyze(textwrap.dedent(src), "t.py", Config(preview=True, select=("ALL",)), fix=False)
    assert [(f.code, f.line) for f in result.findings] == []
    # buggy: a test for a class tracers do belong to guards nothing
    buggy = src.replace("np.ndarray)", "jax.Array)").replace("(int, float)", "(int, jax.Array)")
    result = analyze(textwrap.dedent(buggy), "t.py", Config(preview=True, select=("ALL",)), fix=False)
    assert sorted(f.code for f in result.findings) == ["JAX301", "JAX402"]


def test_a_method_no_array_has_called_on_a_traced_object_returns_no_traced_value():
    # stanford-crfm/levanter@9263f81e8b453241332c2c0b2d2001bfb2d2241c:src/levanter/inference/jit_scheduler.py:247
    # (`tokens.axis_size("position")` on a haliax NamedArray under `eqx.filter_jit`: a static int;
    # annotated as arrays here, as `filter_jit` traces only the arrays it is given)
    # and src/levanter/inference/page_table.py:329; an array method on the same value is traced
    src = """
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        @eqx.filter_jit
        def assign(buffer: jax.Array, tokens: jax.Array):
            n = tokens.axis_size("position")
            if n > 4:
                return buffer[:n]
            return buffer
    """
    assert lines(run(src)) == []
    buggy = src.replace('tokens.axis_size("position")', "tokens.sum()")
    assert [code for code, _ in lines(run(buggy))] == ["JAX301", "JAX307"]
    # a container's content method hands back a leaf: still traced
    content = src.replace('tokens.axis_size("position")', 'tokens.get("position")')
    assert [code for code, _ in lines(run(content))] == ["JAX301", "JAX307"]
    # RIMcKinley/IrrepUNet@<heldout29> irrepunet/models_jax/train.py:508: a private helper of the
    # model, `m._compute_padding(x.shape[-3:])`, computes the padding from the static shape (five
    # JAX3 findings on it labelled wrong); a dunder is an array's own operator: still traced
    private = src.replace('tokens.axis_size("position")', "tokens._compute_padding(buffer.shape[-3:])")
    assert lines(run(private)) == []
    dunder = src.replace('tokens.axis_size("position")', "tokens.__abs__()")
    assert [code for code, _ in lines(run(dunder))] == ["JAX301", "JAX307"]


def test_a_string_method_on_an_object_returns_a_python_value_but_a_module_function_may_not():
    # chenyang86/jax-lob-AC@<heldout25> gymnax_exchange/jaxob/jorderbook.py:83
    # (`int(quote["timestamp"].split(".")[0])` inside a @jax.jit method: int() of a string; two
    # JAX304 labelled wrong). `jnp.split`/`jax.random.split` of the same name are a module's
    # functions, whose parts are traced: int() of one is still reported.
    src = """
        import jax
        import jax.numpy as jnp
        from jax import random

        @jax.jit
        def stamp(quote, x):
            t = int(quote["timestamp"].split(".")[0])
            return x + t
    """
    assert lines(run(src)) == []
    for buggy in ('jnp.split(x, 2)[0][0]', 'random.split(x)[0][0]'):
        assert [code for code, _ in lines(run(src.replace('quote["timestamp"].split(".")[0]', buggy)))] == ["JAX304"]


def test_code_under_ensure_compile_time_eval_is_left_alone():
    # multiscale-closure@<heldout25> src/systems/qg/spectral.py:81 (`with jax.ensure_compile_time_eval():
    # kr = jnp.arange(kmin, kdiff, dkr)` of a model's grid constants; a JAX307 labelled wrong): JAX
    # evaluates the jnp calls on the concrete constants, and the program runs. The same lines
    # outside the context manager are traced and fail: still reported.
    src = """
        import jax
        import jax.numpy as jnp
        import numpy as np

        class Grid:
            def __init__(self):
                self.dk = np.float32(0.5)
                self.dl = np.float32(0.25)

        def spectrum(var, model):
            with jax.ensure_compile_time_eval():
                kmin = jnp.minimum(model.dk, model.dl)
                kr = jnp.arange(kmin, 10.0, kmin)
            return var.sum() + kr.sum()

        run = jax.jit(spectrum, static_argnums=1)
    """
    assert lines(run(src)) == []
    ns = {}
    exec(textwrap.dedent(src), ns)
    assert float(ns["run"](jax.numpy.ones(3), ns["Grid"]())) == 198.0  # the program works as written
    buggy = src.replace("with jax.ensure_compile_time_eval():", "if True:")
    assert [code for code, _ in lines(run(buggy))] == ["JAX307"]


def test_psum_of_a_python_number_is_the_axis_size_a_python_int():
    # `lax.psum(1, axis)` is JAX's idiom for an axis size and returns an `int` (google/tunix@c7d8950
    # tunix/models/qwen3/model.py:56 `num_ep = jax.lax.psum(1, "expert")` inside shard_map, then
    # `if num_ep > 1:`). The psum of an array is traced and still reported.
    src = """
        import jax
        import jax.numpy as jnp

        def f(x):
            n = jax.lax.psum(1, "i")
            if n > 1:
                return x * 2
            return x

        g = jax.jit(jax.vmap(f, axis_name="i"))
    """
    assert lines(run(src)) == []
    buggy = src.replace('jax.lax.psum(1, "i")', 'jax.lax.psum(x, "i")')
    assert [code for code, _ in lines(run(buggy))] == ["JAX301"]
    ns = {}
    exec(textwrap.dedent(src), ns)
    assert ns["g"](jax.numpy.ones(3)).tolist() == [2.0, 2.0, 2.0]  # the program works as written


def test_what_a_numpy_call_returns_is_never_traced():
    # jax-ml/bonsai@36284254 bonsai/models/sam2/model_sam2_transforms.py:97-123: a jitted method
    # converts with `np.array(masks)` (which raises on a tracer: reported there, JAX402) and hands
    # the NumPy copy to a NumPy helper; the helper's in-place NumPy work never runs under a trace.
    src = """
        from functools import partial

        import jax
        import numpy as np

        def fill_holes(mask, area):
            filled = mask.copy()
            areas = np.zeros_like(mask)
            if area > 0:
                filled[areas <= area] = 1.0
            return filled

        @partial(jax.jit, static_argnames=["area"])
        def post(masks, area):
            masks_np = np.array(masks)
            return fill_holes(masks_np[0], area)
    """
    result = analyze(textwrap.dedent(src), "t.py", Config(preview=True, select=("JAX3", "JAX4")), fix=True)
    assert [(f.code, f.line) for f in result.findings] == [("JAX402", 16)]
    # the helper given the traced value itself is still reported
    buggy = src.replace("fill_holes(masks_np[0], area)", "fill_holes(masks[0], area)")
    result = analyze(textwrap.dedent(buggy), "t.py", Config(preview=True, select=("JAX3", "JAX4")), fix=True)
    assert {f.code for f in result.findings} >= {"JAX402", "JAX403"}


def test_a_numpy_reduction_of_a_tracer_is_traced():
    """`np.sum(x)` is `x.sum()` (NumPy hands its argument to the array's own method: measured, the
    `static_values.NUMPY_DELEGATING` table JAX402's `NP_WORKS` reads too), so under `jax.jit` it
    returns a tracer and a Python `if` on it raises TracerBoolConversionError (run here). The same
    reduction of a NumPy array stays a Python value and is not reported."""
    src = """
        import jax
        import jax.numpy as jnp
        import numpy as np


        @jax.jit
        def normalise(x):
            e = np.sum(x ** 2)
            if e > 1.0:
                return x / e
            return x
    """
    result = analyze(textwrap.dedent(src), "t.py", Config(select=("ALL",)), fix=True)
    assert [(f.code, f.line) for f in result.findings] == [("JAX301", 10)]
    ns: dict = {}
    exec(textwrap.dedent(src), ns)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        ns["normalise"](jax.numpy.ones(3))
    fixed: dict = {}
    exec(result.fixed_source, fixed)
    x = jax.numpy.array([0.5, 1.0, 2.0])
    assert np.allclose(fixed["normalise"](x), x / np.sum(np.asarray(x) ** 2))
    # on a NumPy array made from a static shape, the reduction is a Python value
    static = src.replace("e = np.sum(x ** 2)", "e = np.sum(np.asarray(x.shape))")
    assert analyze(textwrap.dedent(static), "t.py", Config(select=("ALL",))).findings == []


def test_a_memoised_helper_never_receives_a_tracer():
    # google/tunix@c7d8950f12a9c55a976bf2e1a0d8b447d71c20b3:tunix/rl/common.py:295-312,602-606 (held-out2 labels): whether the model's
    # `__call__` takes `segment_ids`, asked of `inspect.signature` through a `functools.cache`d
    # helper; a tracer is unhashable, so a memoised function's arguments are never traced and its
    # Python bool is a Python branch under `nnx.jit`
    src = """
        import functools
        import inspect

        import jax


        @functools.cache
        def _call_contains_by_type(target_cls, target_arg: str) -> bool:
            sig = inspect.signature(target_cls.__call__)
            return target_arg in sig.parameters


        def model_call_contains(model, target_arg: str) -> bool:
            target = model.transformer if hasattr(model, "transformer") else model
            return _call_contains_by_type(type(target), target_arg)


        @jax.jit
        def score(model, x, segment_ids):
            kwargs = {}
            has_segment_ids = model_call_contains(model, "segment_ids")
            if has_segment_ids and segment_ids is not None:
                kwargs["segment_ids"] = segment_ids
            return model(x, **kwargs)
    """
    assert lines(run(src)) == []
    # a helper that is not memoised, given the traced array, is still reported
    buggy = """
        import jax


        def positive(x) -> bool:
            return x.sum() > 0


        @jax.jit
        def f(x):
            if positive(x):
                return x
            return -x
    """
    # a helper's result: shown with --preview (traced_control_flow.evidence)
    assert [code for code, _ in lines(run(buggy, preview=True))] == ["JAX301"]


# jax-ml/jax-llm-examples@8b4b24602e06:llama3/llama3_jax/model.py:97,256 (held-out3 labels, tuned
# on after that pool was measured): a module-level lambda helper is a helper like a def. `type(x)`
# of a traced pytree is its Python class, so `is_type(k, QuantArray)` is a Python bool, and a
# `lax.cond` put there traced both branches and read `.quant` of a plain array (38 safe fixes at
# wrong findings broke the repository's tests). A lambda whose body reads the array is still traced.
LAMBDA_HELPER = """
import jax
import jax.numpy as jnp

is_type = lambda x, cls: type(x).__name__ == cls.__name__
positive = lambda x: x.sum() > 0


class QuantArray:
    pass


@jax.jit
def einsum(x, w):
    if is_type(w, QuantArray):
        return x
    return x @ w


@jax.jit
def flip(x):
    if positive(x):
        return x
    return -x
"""


def test_a_module_lambda_helper_is_decided_like_a_def():
    # what a helper returns is shown with --preview (traced_control_flow.evidence)
    assert lines(run(LAMBDA_HELPER, preview=False)) == []
    assert lines(run(LAMBDA_HELPER, preview=True)) == [("JAX301", 22)]  # `positive(x)` only
    twin = LAMBDA_HELPER.replace("is_type = lambda x, cls:", "def is_type(x, cls):\n    return")
    assert lines(run(twin, preview=True)) == [("JAX301", 23)]  # the def decides alike (one line lower)
    rebound = LAMBDA_HELPER.replace("positive = lambda x: x.sum() > 0", "positive = lambda x: x.sum() > 0\nis_type = print")
    assert lines(run(rebound, preview=True)) == [("JAX301", 16), ("JAX301", 23)]  # bound twice: no longer a helper



def test_a_value_a_partial_binds_is_proven_traced_only_by_its_caller(tmp_path):
    """DifferentiableUniverseInitiative/JaxPM@61e5a3a jaxpm/distributed.py:68-82 (heldout7 final
    review): `shard_map(partial(slice_unpad_impl, pad_width=pad_width))` in a helper that only
    other modules call. The transform makes `x` traced; `pad_width` is the helper's value, which
    nothing in this file proves traced (JaxPM passes Python ints a jit keeps static), so the
    `if` on it is not reported. Called from a jitted function of the same file with a traced
    value, it is (the twin)."""
    dist = """
        from functools import partial

        import jax
        from jax import shard_map
        from jax.sharding import PartitionSpec as P


        def unpad_impl(x, pad_width):
            if pad_width > 0:
                x = x * 2
            return x


        def slice_unpad(x, pad_width, mesh):
            return shard_map(partial(unpad_impl, pad_width=pad_width), mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)
    """
    sim = """
        import jax

        from pkg.dist import slice_unpad


        @jax.jit
        def run(x, pad_width):
            return slice_unpad(x, pad_width, None)
    """
    paths = project(tmp_path, {"pkg/dist.py": dist, "pkg/sim.py": sim})
    assert project_findings(paths, "pkg/dist.py") == []
    same_file = dist + """

        @jax.jit
        def run(x, pad_width):
            return slice_unpad(x, pad_width, None)
    """
    assert lines(run(same_file)) == [("JAX301", 10)]


def test_numpyro_key_check_reads_dtype_and_shape_only():
    # ASKabalan/jax-fli@659abc6 src/jax_fli/initial.py:90: numpyro's `is_prng_key` compares the
    # key's dtype and shape, a Python bool under jit; a check of the key's values is traced
    src = """
        import jax
        import jax.numpy as jnp
        from numpyro.util import is_prng_key

        @jax.jit
        def noise(key):
            if not is_prng_key(key):
                raise ValueError("key must be a jax.random.PRNGKey")
            return jax.random.normal(key, (3,))
    """
    assert lines(run(src)) == []
    twin = src.replace("if not is_prng_key(key):", "if not jnp.any(key):")
    assert [code for code, _ in lines(run(twin))] == ["JAX301"]


def test_a_jdc_static_annotation_is_a_static_argument_of_jdc_jit():
    # uynitsuj/jaxmp@<heldout16> scripts/profile_ik.py:139,227: `include_self_coll: jdc.Static[bool]`
    # on a `@jdc.jit` function, which hashes that argument: a Python bool in the body
    src = """
        import jax.numpy as jnp
        import jax_dataclasses as jdc

        @jdc.jit
        def solve(x, include_self_coll: jdc.Static[bool] = False):
            if include_self_coll:
                x = x + 1.0
            return jnp.sum(x)

        total = solve(jnp.ones(3), True)
    """
    assert lines(run(src)) == []
    twin = src.replace("include_self_coll: jdc.Static[bool] = False", "include_self_coll: bool = False")
    assert [code for code, _ in lines(run(twin))] == ["JAX301"]


def test_a_property_that_reads_the_same_name_on_a_part_is_static_when_every_definition_is():
    # matomatical/hijax@<heldout16> solutions08/bsgpt.py:507,541: the model's `max_context_length`
    # returns its transformer's, which returns `num_inputs`, `self.weights.shape[0]`: an int even on
    # a traced model, so `jnp.zeros(padding)` has a static size
    src = """
        import dataclasses
        import functools

        import jax
        import jax.numpy as jnp

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Linear:
            weights: jax.Array

            @property
            def num_inputs(self) -> int:
                return self.weights.shape[0]

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Transformer:
            embedding: Linear

            @property
            def max_context_length(self) -> int:
                return self.embedding.num_inputs

        @jax.tree_util.register_dataclass
        @dataclasses.dataclass
        class Model:
            transformer: Transformer

            @property
            def max_context_length(self) -> int:
                return self.transformer.max_context_length

            @functools.partial(jax.jit, static_argnames=["num_tokens_out"])
            def complete(self, prompt, num_tokens_out: int):
                padding = max(num_tokens_out, self.max_context_length - prompt.shape[0])
                return jnp.concatenate([prompt, jnp.zeros(padding)])
    """
    assert lines(run(src)) == []
    # the buggy twin: the innermost property returns an array
    twin = src.replace("return self.weights.shape[0]", "return jnp.sum(self.weights > 0)")
    assert "JAX307" in [code for code, _ in lines(run(twin))]
