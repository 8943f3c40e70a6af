"""`jaxfix.analysis.value_kinds`: what kind of value a name holds, from this file only."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxfix.analysis.value_kinds import (
    ARRAY,
    FRESH,
    NUMBER,
    PYTREE,
    STATIC,
    UNHASHABLE,
    UNKNOWN,
    ValueKinds,
)
from jaxfix.rulebase import RuleContext

SOURCE = textwrap.dedent(
    '''
    import enum
    from dataclasses import dataclass, field
    from functools import partial
    from typing import NamedTuple

    import flax.struct
    import jax
    import jax.numpy as jnp
    from jaxtyping import Float, Array


    @dataclass(frozen=True)
    class Config:
        lr: float = 0.1
        mode: str = "a"
        dims: tuple[int, ...] = (1, 2)


    @dataclass
    class Mutable:
        lr: float = 0.1


    @dataclass(frozen=True)
    class WithArray:
        w: jax.Array


    @flax.struct.dataclass
    class State:
        w: jax.Array


    class Mode(enum.Enum):
        TRAIN = 1


    class Shape(NamedTuple):
        h: int
        w: int


    def loss_fn(cfg, p):
        return p


    def train(params, batches, cfg, settings, flag: bool, mode: Mode, x: Float[Array, "n"], act, n: int, scale=1.0):
        for batch in batches:
            a = jnp.ones(3)
            d = {"lr": 0.1, "mode": "x"}
            tree = {"w": a, "b": jnp.zeros(2)}
            names = ["a", "b"]
            def inner(v):
                return v
            g = jax.grad(inner)
            part = partial(loss_fn, cfg)
            lam = lambda v: v
            s = "abc"
            e = Mode.TRAIN
            t = (1, 2)
            mut = Mutable()
            k = a.shape[0]
            rows, cols = a.shape
            lr = cfg.lr
            wa = WithArray(a)
            st = State(a)
            shp = Shape(2, 3)
            empty = {}
            maybe = a if flag else 1.0
            probe(
                params, cfg, settings, flag, mode, x, act, n, scale, a, d, tree, names, inner, g, part, lam, s, e,
                t, mut, k, rows, lr, wa, st, shp, empty, maybe, batch
            )


    if __name__ == "__main__":
        train({}, [], Config(), {"metric": "mse"}, True, Mode.TRAIN, jnp.ones(3), jnp.tanh, 3)
    '''
)

EXPECTED = {
    "params": (PYTREE, "empty dict"),  # the only call passes `{}`
    "cfg": (STATIC, "frozen dataclass `Config`"),
    "settings": (UNHASHABLE, "dict of settings"),
    "flag": (STATIC, "bool flag"),
    "mode": (STATIC, "enum `Mode`"),
    "x": (ARRAY, "array"),
    "act": (STATIC, "function `jax.numpy.tanh`"),
    "n": (NUMBER, "Python number"),
    "scale": (NUMBER, "Python number"),  # default 1.0, no call passes it
    "a": (ARRAY, "array"),
    "d": (UNHASHABLE, "dict of settings"),
    "tree": (PYTREE, "dict of arrays"),
    "names": (UNHASHABLE, "list"),
    "inner": (FRESH, "function `inner` defined in `train`"),
    "g": (FRESH, "`grad(...)` made here"),
    "part": (FRESH, "`partial(...)` made here"),
    "lam": (FRESH, "lambda"),
    "s": (STATIC, "string"),
    "e": (STATIC, "enum member `Mode.TRAIN`"),
    "t": (PYTREE, "tuple of numbers"),
    "mut": (UNHASHABLE, "mutable dataclass `Mutable`"),
    "k": (NUMBER, "Python number"),
    "rows": (NUMBER, "Python number"),
    "lr": (NUMBER, "Python number"),  # a float field of the frozen Config
    "wa": (UNHASHABLE, "frozen dataclass `WithArray` with unhashable field `w`"),
    "st": (PYTREE, "pytree class `State`"),
    "shp": (PYTREE, "named tuple `Shape` of numbers"),
    "empty": (PYTREE, "empty dict"),
    "maybe": (ARRAY, "array"),
    "batch": (UNKNOWN, ""),
}


@pytest.fixture(scope="module")
def probed():
    ctx = RuleContext(SOURCE, "m.py")
    kinds = ValueKinds.of(ctx)
    train = next(s for s in ctx.module.body if isinstance(s, cst.FunctionDef) and s.name.value == "train")
    call = train.body.body[0].body.body[-1].body[0].value
    return {arg.value.value: kinds.of_expr(arg.value, call) for arg in call.args}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_kind_of_each_value(probed, name):
    kind = probed[name]
    assert (kind.kind, kind.what) == EXPECTED[name]


def test_hashable_and_callable_flags(probed):
    assert probed["cfg"].static and probed["s"].static and probed["act"].callable
    assert probed["a"].traceable and not probed["a"].static
    assert not probed["settings"].traceable and probed["settings"].hashable is False
    assert probed["batch"].hashable is None  # not known: neither a reason to trace nor to make static


def test_unknown_when_one_call_site_is_unknown():
    source = textwrap.dedent(
        """
        def f(x, opt):
            return x

        f(1, "a")
        f(2, OPT)
        """
    )
    ctx = RuleContext(source, "m.py")
    kinds = ValueKinds.of(ctx)
    fdef = ctx.module.body[0]
    ret = fdef.body.body[0].body[0].value
    assert kinds.of_name("opt", ret).kind == UNKNOWN
    assert kinds.of_name("x", ret).kind == NUMBER
