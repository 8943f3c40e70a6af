"""JAX202 reports a fresh jit in a module function only where the code shows the function run
again (issue #29: on the blind pools most without such evidence were set-up code run once per
run). Each case is from real code, with its buggy twin reported beside it."""

from __future__ import annotations

import textwrap

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def _codes(source: str) -> list[tuple[int, str]]:
    result = analyze(textwrap.dedent(source), "t.py", Config(select=("JAX202",)))
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
