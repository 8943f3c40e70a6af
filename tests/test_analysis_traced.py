"""The jit-context and traced-value analysis on its own: which functions are traced, which names."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxfix.analysis.jit_contexts import JitContexts, jit_contexts
from jaxfix.rulebase import RuleContext


def contexts(source: str) -> JitContexts:
    ctx = RuleContext(textwrap.dedent(source), "t.py")
    return ctx.fact(JitContexts, jit_contexts)


def fn(jc: JitContexts, name: str):
    found = [i for i in jc.functions.values() if i.name == name]
    assert len(found) == 1, [i.name for i in jc.functions.values()]
    return found[0]


def traced_names(jc: JitContexts, name: str) -> set[str]:
    info = fn(jc, name)
    assert info.facts is not None, f"{name} is not under a trace"
    return set(info.facts.all_traced)


def test_decorated_jit_traces_every_parameter():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x, y):
            return x + y
        """
    )
    info = fn(jc, "f")
    assert info.in_trace and info.entry_traced == {"x", "y"}
    assert info.jit_sites[0].wrapper == "jax.jit"


@pytest.mark.parametrize(
    "decorator",
    [
        "@partial(jax.jit, static_argnames=('n',))",
        "@partial(jax.jit, static_argnums=1)",
        "@functools.partial(jit, static_argnums=(1,))",
        "@P(J, static_argnames='n')",
    ],
)
def test_static_arguments_are_not_traced(decorator):
    jc = contexts(
        f"""
        import functools
        from functools import partial
        from functools import partial as P
        import jax
        from jax import jit
        from jax import jit as J
        {decorator}
        def f(x, n):
            y = x * n
            return y
        """
    )
    info = fn(jc, "f")
    assert info.static_params == {"n"}
    assert traced_names(jc, "f") == {"x", "y"}


def test_jit_call_site_alias_and_statics():
    jc = contexts(
        """
        import jax
        def g(x, n):
            return x
        g_jit = jax.jit(g, static_argnames=["n"])
        h_jit = jax.jit(jax.vmap(g))
        """
    )
    info = fn(jc, "g")
    assert info.in_trace
    assert {s.alias for s in info.jit_sites} == {"g_jit"}
    assert "n" in info.static_params
    assert jc.aliases["g_jit"] is info


def test_static_attributes_and_builtins_are_static():
    jc = contexts(
        """
        import jax
        import jax.numpy as jnp
        @jax.jit
        def f(x, bias):
            n = x.shape[0]
            d = x.ndim
            t = x.dtype
            k = len(x)
            is_none = bias is None
            inst = isinstance(x, tuple)
            m = n * 2 + d
            y = x.sum()
            z = jnp.ones(3)
            w = y if n > 2 else x
            return w
        """
    )
    traced = traced_names(jc, "f")
    assert {"n", "d", "t", "k", "is_none", "inst", "m"}.isdisjoint(traced)
    # any jax operation inside a trace is staged out, even on constants
    assert {"x", "bias", "y", "z", "w"} <= traced


def test_flow_sensitive_reassignment_and_loop_fixpoint():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x):
            a = 1
            if_stmt = a > 0
            a = x + 1
            b = 0
            for _ in range(3):
                c = b
                b = x
            return a, b, c
        """
    )
    info = fn(jc, "f")
    facts = info.facts
    body = info.node.body.body
    # before `if_stmt = a > 0`, `a` is still the literal 1
    assert "a" not in facts.env_before(body[1])
    assert "a" in facts.env_before(body[3])
    # the loop body runs again: `c = b` sees the traced b of the previous trip
    assert {"b", "c"} <= facts.all_traced


def test_tuple_assignment_pairs_elements():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x):
            n, y = x.shape[0], x * 2
            rows, cols = x.shape
            return n, y
        """
    )
    traced = traced_names(jc, "f")
    assert "y" in traced and not {"n", "rows", "cols"} & traced


def test_lax_bodies_and_lambdas_are_traced():
    jc = contexts(
        """
        from jax import lax
        def outer(x, n):
            def body(i, acc):
                return acc + i
            return lax.fori_loop(0, n, body, x)
        def step(carry, x):
            return carry, x
        def run(xs):
            return lax.scan(step, 0.0, xs)
        def branches(p, x):
            return lax.cond(p, lambda v: v, lambda v: -v, x)
        """
    )
    assert fn(jc, "body").entry_traced == {"i", "acc"}
    assert fn(jc, "step").in_trace
    assert not fn(jc, "outer").in_trace
    lambdas = [i for i in jc.functions.values() if i.name == "<lambda>"]
    assert len(lambdas) == 2 and all(i.in_trace and i.entry_traced == {"v"} for i in lambdas)


def test_interprocedural_helpers_only_get_traced_arguments():
    jc = contexts(
        """
        import jax
        def helper(v, k, mode="a"):
            return v * k
        def unused(v):
            return v
        @jax.jit
        def f(x):
            return helper(x, 3)
        """
    )
    info = fn(jc, "helper")
    assert info.in_trace
    assert info.entry_traced == {"v"}
    assert traced_names(jc, "helper") == {"v"}
    assert not fn(jc, "unused").in_trace


def test_methods_properties_and_call_of_traced_objects():
    jc = contexts(
        """
        import equinox as eqx
        import jax
        class M(eqx.Module):
            w: jax.Array
            @property
            def scale(self):
                return self.w * 2
            def __call__(self, x):
                return self.apply(x) * self.scale
            def apply(self, x):
                return x + self.w
        @eqx.filter_jit
        def run(model, x):
            return model(x)
        """
    )
    assert fn(jc, "__call__").entry_traced == {"self", "x"}
    assert fn(jc, "apply").entry_traced == {"self", "x"}
    assert fn(jc, "scale").in_trace


def test_calling_a_traced_argument_is_no_call_of_a_class_the_file_does_not_tie_to_it():
    # sanchit-gandhi/seq2seq-speech (heldout9) run_flax_speech_recognition_ctc.py: in the pmapped steps
    # `batch.pop("labels")` and `to_dtype(new_opt_state)` were taken for calls of the one pytree
    # class with a `__call__`, a host-side `@flax.struct.dataclass` data collator; JAX402 then
    # reported its NumPy padding (6 wrong findings, safe fixes)
    jc = contexts(
        """
        import flax.struct
        import jax
        import numpy as np
        @flax.struct.dataclass
        class DataCollator:
            pad_to: int
            def __call__(self, features):
                return np.not_equal(features, self.pad_to)
        def eval_step(params, batch, to_dtype):
            labels = batch.pop("labels")
            return to_dtype(params * labels)
        p_eval_step = jax.pmap(eval_step, "batch")
        """
    )
    assert not fn(jc, "__call__").in_trace
    # tied by an annotation: `Model.__call__` runs on the traced argument
    jc = contexts(
        """
        import flax.struct
        import jax
        import numpy as np
        @flax.struct.dataclass
        class DataCollator:
            pad_to: int
            def __call__(self, features):
                return np.not_equal(features, self.pad_to)
        def eval_step(params, batch, collate: DataCollator):
            return collate(params * batch)
        p_eval_step = jax.pmap(eval_step, "batch")
        """
    )
    assert fn(jc, "__call__").entry_traced == {"self", "features"}


def test_unpassed_literal_defaults_stay_static_passed_ones_are_traced():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x, training=False, scale=1.0):
            return x
        def use(x):
            return f(x, scale=2.0)
        """
    )
    traced = traced_names(jc, "f")
    assert "training" not in traced  # never passed: the Python default under jit
    assert "scale" in traced  # passed: jit turns it into a tracer


def test_vmap_in_axes_none_is_static_and_grad_alone_is_not_a_trace():
    jc = contexts(
        """
        import jax
        def scale(x, k):
            return x * k
        batched = jax.vmap(scale, in_axes=(0, None))
        @jax.grad
        def loss(x):
            return x ** 2
        """
    )
    assert fn(jc, "scale").entry_traced == {"x"}
    assert not fn(jc, "loss").in_trace
    assert fn(jc, "loss").differentiated


def test_differentiated_detection_through_jit():
    jc = contexts(
        """
        import jax
        def loss(x):
            return x
        d = jax.grad(jax.jit(loss))
        e = jax.value_and_grad(loss)
        """
    )
    info = fn(jc, "loss")
    assert info.differentiated and info.in_trace


def test_nested_functions_see_the_enclosing_trace():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x):
            n = 3
            def inner():
                return x + n
            return inner()
        """
    )
    inner = fn(jc, "inner")
    assert inner.in_trace
    facts = inner.facts
    ret = inner.node.body.body[0].body[0].value
    assert isinstance(ret, cst.BinaryOperation)
    assert facts.traced(ret.left) and not facts.traced(ret.right)


def test_static_fields_of_pytree_classes_are_static():
    jc = contexts(
        """
        from typing import Callable
        import equinox as eqx
        import jax
        class M(eqx.Module):
            w: jax.Array
            depth: int
            act: Callable
            mode: str = eqx.field(static=True)
            def __call__(self, x):
                d = self.depth
                a = self.w
                return x
        @jax.jit
        def run(model, x):
            return model(x)
        """
    )
    traced = traced_names(jc, "__call__")
    assert "a" in traced and "d" not in traced


def test_module_functions_are_not_mistaken_for_methods():
    jc = contexts(
        """
        import jax
        import jax.numpy as jnp
        class Table:
            def where(self, c, a, b):
                if c:
                    return a
                return b
        @jax.jit
        def f(x):
            return jnp.where(x > 0, x, 0.0)
        """
    )
    assert not fn(jc, "where").in_trace


# -- precision on real code: values that look traced but are Python values ---------------------


def facts_of(jc: JitContexts, name: str):
    info = fn(jc, name)
    assert info.facts is not None, f"{name} is not under a trace"
    return info.facts


def test_shape_arithmetic_and_axis_size_are_static():
    jc = contexts("""
        import math
        import jax
        def helper(x):
            n = jax.lax.axis_size("i")
            shape = x.shape
            out_shape = (*shape[:1], shape[1] * n)
            size = math.prod(out_shape)
            y = jax.lax.psum(x, "i")
            z = jax.numpy.ones(3)
            return y
        f = jax.vmap(helper, axis_name="i")
        """)
    traced = traced_names(jc, "helper")
    assert {"x", "y", "z"} <= traced
    assert not traced & {"n", "shape", "out_shape", "size"}


def test_jax_utilities_follow_their_arguments():
    # only jax.numpy/lax/random/... calls are staged on constants; `jax._src` helpers, dtype and
    # config functions return what their arguments make them
    jc = contexts("""
        import jax
        from jax._src.util import split_list, canonicalize_axis
        from jax._src import dtypes
        @jax.jit
        def f(x, sizes):
            a, b = split_list((1, 2, 3), [1])
            ax = canonicalize_axis(-1, x.ndim)
            dt = dtypes.canonicalize_dtype(x.dtype)
            cplx = jax.numpy.iscomplexobj(x)
            backend = jax.default_backend()
            tail = split_list(x, [1])
            return x
        """)
    traced = traced_names(jc, "f")
    assert "tail" in traced and "x" in traced
    assert not traced & {"a", "b", "ax", "dt", "cplx", "backend"}


def test_getattr_with_a_default_is_static_and_without_reads_the_attribute():
    jc = contexts("""
        import jax
        @jax.jit
        def f(spec, x):
            delay = getattr(spec, "delay", 0)
            w = getattr(x, "T")
            s = getattr(x, "shape")
            return x
        """)
    traced = traced_names(jc, "f")
    assert "w" in traced
    assert "delay" not in traced and "s" not in traced


def test_enumerate_counter_is_static_and_zip_pairs_iterables():
    jc = contexts("""
        import jax
        @jax.jit
        def f(x, sizes):
            for i, (a, size) in enumerate(zip(x, (1, 2))):
                j = i
                b = a
                c = size
            for k, row in reversed(list(enumerate(x))):
                m = k
                r = row
            flags = [p for p, q in enumerate(x) if q.shape[0] == 1]
            return x
        """)
    traced = traced_names(jc, "f")
    assert {"a", "b", "row", "r"} <= traced
    assert not traced & {"i", "j", "size", "c", "k", "m", "flags"}


def test_truth_of_python_sequences_is_static():
    jc = contexts("""
        from typing import Sequence
        import jax
        import jax.numpy as jnp
        def helper(x, starts: Sequence[int], ids=(), *rest, arr=None):
            starts = tuple(jnp.asarray(s) for s in starts)
            pairs = [(a, b) for a, b in zip(ids, ids)]
            if starts:
                pass
            if ids and rest:
                pass
            if pairs or not starts:
                pass
            if x:
                pass
            if ids and x:
                pass
        @jax.jit
        def f(x, i, j):
            helper(x, [i, j], ids=(i, j))
            return x
        """)
    facts = facts_of(jc, "helper")
    ifs = [s for s in fn(jc, "helper").node.body.body if isinstance(s, cst.If)]
    assert [facts.test_traced(s.test, s) for s in ifs] == [False, False, False, True, True]
    # the elements are still traced values
    assert facts.traced(cst.parse_expression("starts[0]"))
    assert {"starts", "ids", "rest", "pairs"} <= facts.sequences


def test_parameter_passed_an_array_somewhere_is_not_a_sequence():
    jc = contexts("""
        import jax
        def helper(x, ids=()):
            if ids:
                pass
        @jax.jit
        def f(x, i):
            helper(x, ids=(i, i))
            helper(x, ids=i)
            return x
        """)
    facts = facts_of(jc, "helper")
    stmt = next(s for s in fn(jc, "helper").node.body.body if isinstance(s, cst.If))
    assert "ids" not in facts.sequences
    assert facts.test_traced(stmt.test, stmt)


def test_self_of_a_plain_class_is_not_traced():
    jc = contexts("""
        import jax
        class Scheduler:
            def __init__(self, step, flag):
                self.step = step
                self.flag = flag
            def scope(self, x):
                f = self.flag
                y = x
                return y
        def body(i, carry):
            s = Scheduler(i, True)
            s.scope(carry)
            return carry
        out = jax.lax.fori_loop(0, 3, body, 0.0)
        """)
    traced = traced_names(jc, "scope")
    assert "y" in traced and "x" in traced
    assert "self" not in traced and "f" not in traced


def test_self_of_a_pytree_class_is_traced():
    jc = contexts("""
        import jax
        @jax.tree_util.register_pytree_node_class
        class Box:
            def __init__(self, v):
                self.v = v
            def tree_flatten(self):
                return (self.v,), None
            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children)
            def get(self):
                w = self.v
                return w
        @jax.jit
        def f(box):
            return box.get()
        """)
    assert "w" in traced_names(jc, "get")


def test_calling_a_partial_object_is_not_a_module_call_method():
    jc = contexts("""
        import functools
        import equinox as eqx
        import jax
        class Model(eqx.Module):
            w: jax.Array
            def __call__(self, x):
                return x * self.w
        def mask(v, x):
            return x
        def body(i, carry):
            g = functools.partial(mask, 0.0, carry)
            return g(carry)
        @jax.jit
        def apply(model, x):
            return model(x)
        out = jax.lax.fori_loop(0, 3, body, 0.0)
        """)
    call = fn(jc, "__call__")
    assert call.in_trace  # through `model(x)`: a traced parameter
    assert all("body" not in r for r in call.reasons)


def test_partial_bound_arguments_are_python_constants():
    jc = contexts("""
        import functools
        import jax
        def outer():
            def foo(x, y, flag):
                return x
            foo = functools.partial(foo, flag=True)
            foo = jax.pmap(foo)
            foo = jax.jit(foo)
            return foo
        def scale(x, mode):
            return x
        halve = jax.jit(functools.partial(scale, mode="half"))
        """)
    assert fn(jc, "foo").facts is not None
    assert "flag" not in traced_names(jc, "foo")
    assert traced_names(jc, "foo") >= {"x", "y"}
    assert "mode" not in traced_names(jc, "scale") and "x" in traced_names(jc, "scale")


def test_static_properties_of_pytree_classes():
    jc = contexts("""
        import jax
        @jax.tree_util.register_pytree_node_class
        class Sparse:
            def __init__(self, data, indices):
                self.data, self.indices = data, indices
            nse = property(lambda self: self.indices.shape[-2])
            first = property(lambda self: self.data[0])
            @property
            def n_sparse(self):
                return self.indices.shape[-1]
            def tree_flatten(self):
                return (self.data, self.indices), None
            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children)
        @jax.jit
        def f(mat):
            a = mat.nse
            b = mat.n_sparse
            c = mat.first
            return mat
        """)
    assert jc.static_attrs >= {"nse", "n_sparse"} and "first" not in jc.static_attrs
    traced = traced_names(jc, "f")
    assert "c" in traced and not traced & {"a", "b"}


def test_static_argnums_of_a_jitted_bound_method_count_after_self():
    """jax issue 15338: `jax.jit(self.do, static_argnums=1)(key, (2, 3, 4))` makes `shape` (the
    second argument after `self`) static, not `key`."""
    jc = contexts(
        """
        import jax
        class Sampler:
            def do(self, key, shape):
                return jax.random.uniform(key, shape)
            def draw(self, key):
                return jax.jit(self.do, static_argnums=1)(key, (2, 3))
        """
    )
    traced = traced_names(jc, "do")
    assert "key" in traced and "shape" not in traced


# AI-Hypercomputer/maxdiffusion@305154ab:src/maxdiffusion/generate_sdxl.py (`run_inference`): the
# fori_loop body is a name bound to `functools.partial(loop_body, ...)`; the keywords it binds are
# traced where their values are (an array computed under the jit) and static where they are Python
# values (`config`, bound by the jitted partial). Fixed upstream in d9a69396 with `lax.cond`.
PARTIAL_BODY = """
import functools
import jax
import jax.numpy as jnp


def loop_body(step, args, guidance_rescale, config):
    latents = args
    if config.do_classifier_free_guidance:
        latents = latents * 2
    if guidance_rescale > 0:
        latents = latents * guidance_rescale
    return latents


def run_inference(states, config):
    guidance_rescale = states.mean() * config.guidance_rescale
    loop_body_p = functools.partial(loop_body, guidance_rescale=guidance_rescale, config=config)
    return jax.lax.fori_loop(0, config.num_inference_steps, loop_body_p, states)


def run(config, states):
    p_run_inference = jax.jit(functools.partial(run_inference, config=config))
    return p_run_inference(states)
"""


def test_a_partial_lax_body_is_traced_with_its_bound_keywords_as_their_values():
    jc = contexts(PARTIAL_BODY)
    assert traced_names(jc, "loop_body") >= {"step", "args", "guidance_rescale"}
    assert "config" not in traced_names(jc, "loop_body")


def test_a_partial_lax_body_reports_the_traced_if_and_not_the_config_one():
    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config

    found = analyze(textwrap.dedent(PARTIAL_BODY), "t.py", Config(select=("JAX3",))).findings
    assert [(f.line, f.code) for f in found] == [(11, "JAX301")]
    # a Python value bound by the partial stays static: no finding
    static = PARTIAL_BODY.replace(
        "guidance_rescale = states.mean() * config.guidance_rescale",
        "guidance_rescale = config.guidance_rescale",
    )
    assert analyze(textwrap.dedent(static), "t.py", Config(select=("JAX3",))).findings == []
