"""Hypothesis strategies that build JAX-shaped Python programs from small grammars.

`jax_programs()` draws a `Program`: module source text (always valid Python) made of
jitted functions (decorator, `jax.jit(f)`, `partial(jax.jit, static_argnames=...)`) with
`if`/`while`/`for` over traced and static values, nested functions, pytree classes (flax
struct, equinox, `register_dataclass`) with cached properties, loops that create
`jax.jit(partial(...))`/`jax.jit(lambda ...)`, prints, NumPy calls, in-place style updates,
comments and odd formatting (parenthesised continuations, semicolons, CRLF, tabs, unicode
names, form feeds).

Every program defines `main(x, y)` that calls each generated function, so the program is
runnable: `x` is a float32 array of shape (3,), `y` a float32 scalar. Programs drawn with
`runnable_only=True` avoid constructs whose eager run can raise or loop forever (so a
behaviour check can compare the eager original with the fixed program run under jit).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

UNICODE_NAMES = ("größe", "λ_val", "変数", "naïve", "Δx", "ñ")
ASCII_NAMES = ("acc", "tmp", "val", "out", "z", "h")


@dataclass(frozen=True)
class Program:
    source: str
    runnable: bool  # main(x, y) is expected to run eagerly without raising
    features: tuple[str, ...]

    def __repr__(self) -> str:  # Hypothesis prints this for a falsifying example
        return f"Program(features={self.features!r}, runnable={self.runnable}, source=\n{self.source}\n)"


class _Writer:
    """Lines with indentation as units; rendered with spaces or tabs at the end."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []

    def add(self, depth: int, text: str) -> None:
        for part in text.split("\n"):
            self.lines.append((depth, part))

    def render(self, indent: str) -> str:
        return "".join((indent * d + t if t else "") + "\n" for d, t in self.lines)


@st.composite
def _scalar_expr(draw, names: tuple[str, ...], np_alias: str, jnp_alias: str, runnable: bool) -> str:
    """An expression that is a float32 scalar when every name is a (3,) array or scalar."""
    name = draw(st.sampled_from(names))
    forms = [
        f"{jnp_alias}.sum({name})",
        f"{jnp_alias}.max({name})",
        f"{name}.sum()",
        f"{jnp_alias}.mean({name} * 2.0)",
        f"{jnp_alias}.sum({jnp_alias}.sin({name}))",
    ]
    if not runnable:
        forms += [f"{np_alias}.sum({name})", f"float({name}.sum())", f"{name}.sum().item()"]
    return draw(st.sampled_from(forms))


@st.composite
def _array_expr(draw, names: tuple[str, ...], np_alias: str, jnp_alias: str, runnable: bool) -> str:
    a = draw(st.sampled_from(names))
    b = draw(st.sampled_from(names))
    forms = [
        f"{a} * 2.0",
        f"{a} + {b}",
        f"{jnp_alias}.sin({a})",
        f"{jnp_alias}.tanh({a}) - 0.5 * {b}",
        f"{a}.at[0].set(1.0)",
        f"{jnp_alias}.where({a} > 0, {a}, -{a})",
        f"({a}\n    + 1.0)",  # parenthesised continuation
        f"{a} * {jnp_alias}.float32(0.5)",
    ]
    if draw(st.booleans()):
        forms.append(f"{np_alias}.cos({a})")  # NumPy on a traced value: JAX306 (fails under jit)
    if not runnable:
        forms += [f"{np_alias}.asarray({a}) + 1", f"{a}[: int({a}[0])]"]
    return draw(st.sampled_from(forms))


@st.composite
def _condition(draw, names, static_names, np_alias, jnp_alias, runnable) -> str:
    forms = [
        f"{draw(_scalar_expr(names, np_alias, jnp_alias, runnable))} > {draw(st.sampled_from(['0', '0.0', '1.5', '-1.0']))}",
        f"{draw(st.sampled_from(names))}[0] < 0.5",
    ]
    if static_names:
        s = draw(st.sampled_from(static_names))
        forms += [f"{s} > 1", f"{s} == 2"]
    if not runnable:
        forms += [
            f"{draw(st.sampled_from(names))}.shape[0] > 2",
            f"{draw(st.sampled_from(names))} is None",
            f"{draw(st.sampled_from(names))}[0] > 0 and {draw(st.sampled_from(names))}[1] < 1",
            f"not {draw(st.sampled_from(names))}[0] > 0",
        ]
    return draw(st.sampled_from(forms))


@st.composite
def _body(draw, w: _Writer, depth: int, target: str, names: tuple[str, ...], static_names, ctx, budget: int) -> None:
    """Statements that keep `target` (an array of shape (3,)) defined and of that shape."""
    np_alias, jnp_alias, runnable = ctx["np"], ctx["jnp"], ctx["runnable"]
    count = draw(st.integers(1, 3))
    for _ in range(count):
        kind = draw(
            st.sampled_from(
                ["assign", "assign", "if", "ifelse", "ifexpr", "for_static", "for_const", "while", "print", "comment", "semicolon"]
                + (["for_traced", "assert", "to_python", "while_true"] if not runnable else [])
            )
        )
        if budget <= 0 and kind in ("if", "ifelse", "for_static", "for_const", "while", "for_traced", "while_true"):
            kind = "assign"
        arr = lambda: draw(_array_expr(names, np_alias, jnp_alias, runnable))  # noqa: E731
        if kind == "assign":
            w.add(depth, f"{target} = {arr()}")
        elif kind == "comment":
            w.add(depth, draw(st.sampled_from(["# a comment", "#: odd comment ¿", "  # indented comment"])))
            w.add(depth, draw(st.sampled_from(["pass  # nothing", f"{target} = {target}  # same"])))
        elif kind == "semicolon":
            w.add(depth, f"{target} = {target} * 1.0; {target} = {target} + 0.0")
        elif kind == "print":
            w.add(depth, draw(st.sampled_from([f"print({target})", f"print('value', {target}[0])", f"jax.debug.print('{{}}', {target})"])))
        elif kind in ("if", "ifelse"):
            cond = draw(_condition(names, static_names, np_alias, jnp_alias, runnable))
            w.add(depth, f"if {cond}:")
            draw(_body(w, depth + 1, target, names, static_names, ctx, budget - 1))
            if kind == "ifelse":
                if draw(st.booleans()):
                    cond2 = draw(_condition(names, static_names, np_alias, jnp_alias, runnable))
                    w.add(depth, f"elif {cond2}:")
                    draw(_body(w, depth + 1, target, names, static_names, ctx, budget - 1))
                w.add(depth, "else:")
                draw(_body(w, depth + 1, target, names, static_names, ctx, budget - 1))
        elif kind == "ifexpr":
            cond = draw(_condition(names, static_names, np_alias, jnp_alias, runnable))
            w.add(depth, f"{target} = {arr()} if {cond} else {target}")
        elif kind == "for_static" and static_names:
            w.add(depth, f"for k in range({draw(st.sampled_from(static_names))}):")
            draw(_body(w, depth + 1, target, names, static_names, ctx, budget - 1))
        elif kind in ("for_const", "for_static"):
            w.add(depth, f"for k in range({draw(st.sampled_from(['0', '1', '3']))}):")
            draw(_body(w, depth + 1, target, names, static_names, ctx, budget - 1))
        elif kind == "while":
            counter = draw(st.sampled_from(["i", "j"]))
            cond_kind = draw(st.sampled_from(["static", "traced"]))
            if cond_kind == "static":
                w.add(depth, f"{counter} = 0")
                w.add(depth, f"while {counter} < {draw(st.sampled_from(['0', '1', '3']))}:")
                draw(_body(w, depth + 1, target, names, static_names, ctx, budget - 1))
                w.add(depth + 1, f"{counter} += 1")
            else:
                # terminates on every finite input: the sum of |target| halves each trip
                w.add(depth, f"{target} = {jnp_alias}.abs({target}) + 0.0")
                w.add(depth, f"while {jnp_alias}.sum({target}) > 1.0:")
                w.add(depth + 1, f"{target} = {target} * 0.5")
        elif kind == "for_traced":
            w.add(depth, f"for k in range({jnp_alias}.sum({target}).astype(int)):")
            w.add(depth + 1, f"{target} = {target} + k")
        elif kind == "while_true":
            w.add(depth, f"while {target}[0] > 0:")
            w.add(depth + 1, f"{target} = {target} - 1.0")
        elif kind == "assert":
            w.add(depth, f"assert {target}[0] > -100.0, 'too small'")
        elif kind == "to_python":
            w.add(depth, f"{target} = {target} * int({target}[0])")


@st.composite
def _jitted_function(draw, w: _Writer, index: int, ctx) -> str:
    """One jitted function; returns the call to put in main (or '' when it is not called)."""
    jax_alias, jnp_alias = ctx["jax"], ctx["jnp"]
    name = draw(st.sampled_from(("f", "step", "update", ctx["uname"]))) + str(index)
    static = draw(st.booleans())
    params = "x, y, n" if static else "x, y"
    static_names = ("n",) if static else ()
    style = draw(st.sampled_from(["decorator", "call", "partial_names", "partial_nums", "plain"]))
    if style == "decorator":
        w.add(0, f"@{jax_alias}.jit" if not static else f"@{ctx['partial']}({jax_alias}.jit, static_argnames=('n',))")
    elif style == "partial_names":
        w.add(0, f"@{ctx['partial']}({jax_alias}.jit, static_argnames=\"n\")" if static else f"@{ctx['partial']}({jax_alias}.jit)")
    elif style == "partial_nums":
        w.add(0, f"@{ctx['partial']}(\n    {jax_alias}.jit,\n    static_argnums=(2,),\n)" if static else f"@{jax_alias}.jit  # trailing comment")
    w.add(0, f"def {name}({params}):")
    if draw(st.booleans()):
        w.add(1, '"""Docstring with ünïcode."""')
    target = draw(st.sampled_from(ASCII_NAMES + (ctx["uname"],)))
    w.add(1, f"{target} = x + y")
    if draw(st.integers(0, 3)) == 0:
        # a nested function called from the traced body
        w.add(1, "def inner(v):")
        draw(_body(w, 2, "v", ("v",), (), ctx, 1))
        w.add(2, "return v")
        w.add(1, f"{target} = inner({target})")
    draw(_body(w, 1, target, (target, "x"), static_names, ctx, 2))
    w.add(1, f"return {target}")
    w.add(0, "")
    w.add(0, "")
    called = name
    if style == "call":
        jname = f"{name}_jit"
        if static:
            w.add(0, f"{jname} = {jax_alias}.jit({name}, static_argnames=('n',))")
        else:
            w.add(0, f"{jname} = {jax_alias}.jit({name})")
        w.add(0, "")
        w.add(0, "")
        called = jname
    args = "x, y, 2" if static else "x, y"
    return f"{called}({args})"


@st.composite
def _jit_in_loop(draw, w: _Writer, index: int, ctx) -> str:
    jax_alias, jnp_alias = ctx["jax"], ctx["jnp"]
    helper = f"scale{index}"
    w.add(0, f"def {helper}(v, factor):")
    w.add(1, "return v * factor")
    w.add(0, "")
    w.add(0, "")
    name = f"loop{index}"
    w.add(0, f"def {name}(x, y):")
    w.add(1, f"out = {jnp_alias}.zeros_like(x)")
    trips = draw(st.sampled_from(["0", "1", "3"]))
    form = draw(st.sampled_from(["lambda", "partial", "partial_kw", "rewrap", "grad", "comprehension"]))
    if form == "comprehension":
        w.add(1, f"parts = [{jax_alias}.jit(lambda v: v * k)(x) for k in range({trips})]")
        w.add(1, "for p in parts:")
        w.add(2, "out = out + p")
    else:
        w.add(1, f"for k in range({trips}):")
        if form == "lambda":
            w.add(2, f"out = out + {jax_alias}.jit(lambda v: v * 2.0 + y)(x)")
        elif form == "partial":
            w.add(2, f"out = out + {jax_alias}.jit({ctx['partial']}({helper}, factor=2.0))(x)")
        elif form == "partial_kw":
            w.add(2, f"g = {jax_alias}.jit({ctx['partial']}({helper}, factor=k))")
            w.add(2, "out = out + g(x)")
        elif form == "rewrap":
            w.add(2, f"out = out + {jax_alias}.jit({helper})(x, 3.0)")
        elif form == "grad":
            w.add(2, f"out = out + {jax_alias}.grad(lambda v: {jnp_alias}.sum(v * v))(x)")
    w.add(1, "return out")
    w.add(0, "")
    w.add(0, "")
    return f"{name}(x, y)"


@st.composite
def _pytree_class(draw, w: _Writer, index: int, ctx) -> str:
    jax_alias, jnp_alias = ctx["jax"], ctx["jnp"]
    kind = draw(st.sampled_from(["flax", "equinox", "register_dataclass", "plain"]))
    cls = f"Model{index}"
    cached = draw(st.sampled_from(["functools.cached_property", "cached_property", "property"]))
    ctx["imports"].add("functools")
    if cached == "cached_property":
        ctx["imports"].add("from functools import cached_property")
    if kind == "flax":
        ctx["imports"].add("from flax import struct")
        w.add(0, f"class {cls}(struct.PyTreeNode):")
        w.add(1, "w: jax.Array")
        w.add(1, "scale: float = struct.field(pytree_node=False, default=2.0)")
        make = f"{cls}(w=x)"
    elif kind == "equinox":
        ctx["imports"].add("import equinox as eqx")
        w.add(0, f"class {cls}(eqx.Module):")
        w.add(1, "w: jax.Array")
        w.add(1, "scale: float = eqx.field(static=True, default=2.0)")
        make = f"{cls}(w=x)"
    elif kind == "register_dataclass":
        ctx["imports"].add("import dataclasses")
        w.add(0, f"@{jax_alias}.tree_util.register_dataclass")
        w.add(0, "@dataclasses.dataclass(frozen=True)")
        w.add(0, f"class {cls}:")
        w.add(1, "w: jax.Array")
        w.add(1, "scale: float = dataclasses.field(default=2.0, metadata=dict(static=True))")
        make = f"{cls}(w=x)"
    else:
        w.add(0, f"class {cls}:")
        w.add(1, "def __init__(self, w):")
        w.add(2, "self.w = w")
        w.add(2, "self.scale = 2.0")
        make = f"{cls}(x)"
    w.add(0, "")
    w.add(1, f"@{cached}")
    w.add(1, "def norm(self):")
    if draw(st.booleans()):
        w.add(2, '"""A derived value."""')
    w.add(2, f"return {jnp_alias}.sum({jnp_alias}.sin(self.w)) * self.scale")
    w.add(0, "")
    w.add(0, "")
    use = f"use{index}"
    jitted = kind != "plain" and draw(st.booleans())
    if jitted:
        w.add(0, f"@{jax_alias}.jit")
    w.add(0, f"def {use}(m):")
    w.add(1, "return m.w * m.norm")
    w.add(0, "")
    w.add(0, "")
    return f"{use}({make})"


@st.composite
def jax_programs(draw, runnable_only: bool = False) -> Program:
    runnable = runnable_only or draw(st.booleans())
    ctx: dict = {
        "jax": "jax",
        "jnp": draw(st.sampled_from(["jnp", "jax.numpy"])),
        "np": draw(st.sampled_from(["np", "onp"])),
        "partial": draw(st.sampled_from(["partial", "functools.partial"])),
        "uname": draw(st.sampled_from(UNICODE_NAMES + ASCII_NAMES)),
        "runnable": runnable,
        "imports": set(),
    }
    w = _Writer()
    features: list[str] = []
    calls: list[str] = []
    count = draw(st.integers(1, 4))
    for index in range(count):
        kind = draw(st.sampled_from(["jitted", "jitted", "jit_in_loop", "pytree"]))
        features.append(kind)
        if kind == "jitted":
            calls.append(draw(_jitted_function(w, index, ctx)))
        elif kind == "jit_in_loop":
            calls.append(draw(_jit_in_loop(w, index, ctx)))
        else:
            calls.append(draw(_pytree_class(w, index, ctx)))
    w.add(0, "def main(x, y):")
    w.add(1, "results = []")
    for call in calls:
        w.add(1, f"results.append({call})")
    w.add(1, "return results")
    body_indent = draw(st.sampled_from(["    ", "    ", "  ", "\t"]))
    if body_indent == "\t":
        features.append("tabs")
    body = w.render(body_indent)

    header = []
    if draw(st.booleans()):
        header.append('"""Generated module."""')
    if draw(st.booleans()):
        header.append("from __future__ import annotations")
    header.append("import functools")
    if ctx["partial"] == "partial":
        header.append("from functools import partial")
    header.append("import jax")
    if ctx["jnp"] == "jnp":
        header.append("import jax.numpy as jnp")
    header.append("import numpy as np" if ctx["np"] == "np" else "import numpy as onp")
    for extra in sorted(ctx["imports"]):
        if extra != "functools":
            header.append(extra)
    if draw(st.booleans()):
        header.insert(draw(st.integers(0, len(header))), "# -*- header comment -*-")
    text = "\n".join(header) + "\n\n\n" + body
    if draw(st.integers(0, 5)) == 0:
        text = text.replace("\n\n\ndef main", "\n\n\x0c\ndef main")  # a form feed between blocks
        features.append("formfeed")
    if draw(st.integers(0, 3)) == 0:
        text = text.replace("\n", "\r\n")
        features.append("crlf")
    return Program(source=text, runnable=runnable, features=tuple(features))
