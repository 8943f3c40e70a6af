"""JAX201 and a function stored in a container: `jax.jit(engine.step)` re-wrapped per trip, where
`engine` holds plain functions (a NamedTuple or dataclass whose `step` field is annotated
`Callable`, an optax transformation), is the same function on every read: a cache hit (JAX203, a
preview re-wrap), not a fresh bound method that compiles again. PaulScemama/aevb@<heldout29>
examples/jax/mnist.py:131 (`engine: AevbEngine = Aevb(...)`, JAX201 labelled wrong four times)
and optax's own transforms/_adding_test.py:86 (`jax.jit(noise.update)` per step). Traces are
counted with the real jax on CPU; a method of a class stays JAX201."""

from __future__ import annotations

import textwrap
from pathlib import Path

from jaxfix.batch import BatchOptions, run_paths
from jaxfix.engine import analyze
from jaxfix.engine.config import Config, ConfigResolver

ENGINE = """
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

TRACES = []


class Engine(NamedTuple):
    init: Callable
    step: Callable[[jax.Array], jax.Array]


class Model:
    def step(self, x):
        TRACES.append("model")
        return x + 1


def make_engine() -> Engine:
    def step(s):
        TRACES.append("engine")
        return s + 1

    return Engine(init=lambda: jnp.zeros(3), step=step)


def run(n):
    engine: Engine = make_engine()
    state = engine.init()
    for _ in range(n):
        state = jax.jit(engine.step)(state)
    return state


def run_given(engine: Engine, state, n):
    for _ in range(n):
        state = jax.jit(engine.step)(state)
    return state


def run_model(n):
    model: Model = Model()
    state = jnp.zeros(3)
    for _ in range(n):
        state = jax.jit(model.step)(state)
    return state
"""


def findings(source: str, preview: bool = True) -> list[tuple[str, int]]:
    result = analyze(textwrap.dedent(source), "lib.py", Config(select=("ALL",), preview=preview), fix=False)
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


def _line(source: str, text: str, after: str = "") -> int:
    lines = textwrap.dedent(source).splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i + 1 for i, line in enumerate(lines) if i >= start and text in line)


def test_a_callable_field_is_one_function_and_a_method_is_not():
    engine_line = _line(ENGINE, "jax.jit(engine.step)")
    given_line = _line(ENGINE, "jax.jit(engine.step)", after="def run_given")
    model_line = _line(ENGINE, "jax.jit(model.step)")
    assert findings(ENGINE) == [("JAX201", model_line), ("JAX203", engine_line), ("JAX203", given_line)]
    assert [f for f in findings(ENGINE, preview=False) if f[0] != "JAX203"] == [("JAX201", model_line)]
    ns: dict = {}
    exec(textwrap.dedent(ENGINE), ns)
    ns["run"](10)
    ns["run_given"](ns["make_engine"](), ns["jnp"].zeros(3), 10)
    ns["run_model"](10)
    assert ns["TRACES"].count("engine") == 2  # once per engine made, not per trip
    assert ns["TRACES"].count("model") == 10  # a new bound method per trip traces again


def test_a_field_not_annotated_callable_or_a_method_of_the_tuple_stays_reported():
    """A field annotated with another type, or `step` defined as a method of the NamedTuple, is
    read as a bound method: the annotation is the evidence, not the class kind."""
    as_int = ENGINE.replace("step: Callable[[jax.Array], jax.Array]", "step: int")
    assert ("JAX201", _line(as_int, "jax.jit(engine.step)")) in findings(as_int)
    as_method = ENGINE.replace(
        "    step: Callable[[jax.Array], jax.Array]\n", "\n    def step(self, x):\n        return x + 1\n"
    )
    assert ("JAX201", _line(as_method, "jax.jit(engine.step)")) in findings(as_method)


OPTAX = """
import jax
import jax.numpy as jnp
import optax


def train(params, n):
    opt = optax.adam(1e-3)
    state = opt.init(params)
    for _ in range(n):
        updates, state = jax.jit(opt.update)(params, state)
    return updates


def train_multi(params, n):
    opt = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
    state = opt.init(params)
    for _ in range(n):
        updates, state = jax.jit(opt.update)(params, state)
    return updates
"""


def test_an_optax_transformation_holds_plain_functions():
    """`optax.adam(...)` returns a `GradientTransformation` NamedTuple: `opt.update` is one function
    (1 trace for 5 re-wraps); `optax.MultiSteps(...)` is a class whose `update` is a method."""
    assert findings(OPTAX) == [
        ("JAX201", _line(OPTAX, "jax.jit(opt.update)", after="def train_multi")),
        ("JAX203", _line(OPTAX, "jax.jit(opt.update)")),
    ]
    import jax
    import jax.numpy as jnp
    import optax

    opt = optax.adam(1e-3)
    params = jnp.ones(3)
    state = opt.init(params)
    before = jax.jit(opt.update)._cache_size()
    for _ in range(5):
        _, state = jax.jit(opt.update)(params, state, params)
    assert jax.jit(opt.update)._cache_size() == before + 1


def test_a_callable_field_of_a_class_in_another_module(tmp_path: Path):
    """The annotation names a class the project defines in another module (aevb's examples import
    `AevbEngine` from `aevb.aevb`): the project index gives its callable fields."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    engine_module = ENGINE.split("def run(n):")[0]
    (pkg / "engine.py").write_text(textwrap.dedent(engine_module))
    (pkg / "main.py").write_text(
        "import jax\n\nfrom pkg.engine import Engine, Model, make_engine\n\n\n"
        "def main(n):\n    engine: Engine = make_engine()\n    state = engine.init()\n"
        "    for _ in range(n):\n        state = jax.jit(engine.step)(state)\n"
        "    model: Model = Model()\n    for _ in range(n):\n        state = jax.jit(model.step)(state)\n"
        "    return state\n"
    )
    outcome = run_paths([str(pkg)], ConfigResolver(), BatchOptions(workers=1))
    found = sorted((Path(f.path).name, f.line, f.code) for f in outcome.findings)
    assert found == [("main.py", 10, "JAX203"), ("main.py", 13, "JAX201")]
