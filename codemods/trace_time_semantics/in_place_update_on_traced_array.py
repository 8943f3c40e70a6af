"""JAX403 `in-place-update-on-traced-array`: `x[i] = v` / `x[i] += v` on a traced JAX array,
which is immutable."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from codemods.trace_time_semantics import preview
from codemods.trace_time_semantics.common import (
    certainly_traced,
    code,
    fits,
    message,
    short,
    traced_functions,
)
from codemods.trace_time_semantics.in_place_screen import ArrayScreen, eager_store, traced_store_root
from jaxfix.analysis.cstparse import parsing_config
from jaxfix.analysis.eager_arrays import eager_array_names_cst
from jaxfix.analysis.flax_modules import variable_attributes
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.names import ImportMap, stored_root_name
from jaxfix.analysis.pallas import kernel_names
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.trace_screen import (
    MAY_NAME_A_TRANSFORM,
    NO_ENTRIES,
    ScreenEntries,
    any_site,
)
from jaxfix.analysis.trace_sites import ArrayEvidence, own_sites
from jaxfix.analysis.walk import walk
from jaxfix.model import Finding, Fix, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid, pattern_found

# An item assignment has `]` then `=` or an augmented operator (spaces, comments or line breaks
# between them are not seen; such code is not flagged).
ITEM_STORES = tuple(
    f"]{space}{op}=" for space in ("", " ") for op in ("", "+", "-", "*", "/", "//", "**", "%", "&", "|", "^", "<<", ">>", "@")
)
# Found in a text exactly when one of `ITEM_STORES` is: one search instead of 28 substring scans
# (0.002 s instead of 0.16 s over the jax/flax/optax sources).
ITEM_STORE = re.compile(r"\] ?(?:\*\*|//|<<|>>|[-+*/%&|^@])?=")

# augmented operator -> `.at[...]` method
AT_METHODS = {"+=": "add", "-=": "subtract", "*=": "multiply", "/=": "divide", "**=": "power"}
# augmented operators without an `.at` method: `x = x.at[i].set(x[i] OP v)`
OTHER_OPS = {"//=": "//", "%=": "%", "&=": "&", "|=": "|", "^=": "^", "<<=": "<<", ">>=": ">>"}


class InPlaceUpdateRule(Rule):
    """
    ## What it does
    Finds item assignments `x[i] = v` and augmented item assignments (`x[i] += v`, `-=`, `*=`,
    `/=`, `**=`, `//=`, `%=`, ...) on a traced JAX array inside traced code.

    ## Why is this bad?
    JAX arrays are immutable. Under `jit` (and eagerly too) the assignment raises
    `TypeError: JAX arrays are immutable and do not support in-place item assignment. Instead of
    x[idx] = y, use x = x.at[idx].set(y) ...`. The functional form `x = x.at[i].set(v)` is what
    JAX offers; inside `jit` XLA performs it in place when `x` is not used afterwards.

    The rule only fires when `x` is a JAX array by the evidence in the function: it is used as one
    (`x.shape`, `x.at`, `x.astype(...)`), or every binding of it is a `jax.numpy`/`lax` result,
    arithmetic on traced values or an array method, and a parameter is annotated with an array
    type. Lists and dicts being built (`out = []`, `d = {}`, `params["w"] = ...` on a dict), a
    store with a string key (`obj.data["params"] = v`: a dict, whatever holds it) and NumPy
    arrays are never flagged, nor is a store into a chain that indexes with a string anywhere
    (`state[0]["frames"][i] = v`: an array indexed by a string raises, so `state[0]` holds a dict).

    ## Known problems
    The reference for the fix is NumPy semantics, which the original code was written for.
    NumPy and `.at` differ where NumPy mutates shared memory: when another name aliases `x`
    (`y = x`, or `x` is a view `x = m[0]`), NumPy's update shows through the alias and the
    rewrite's does not (the fix is then unsafe); a caller never sees an update of its argument
    (JAX arrays cannot be updated in place anyway). An out-of-bounds index raises `IndexError` in
    NumPy and is dropped by `.at` (the default `mode`). With repeated indices in an index array,
    NumPy applies an augmented update once and `.at[...].add` applies each (unsafe when the index
    is traced), and which `.set` wins is unspecified in JAX.

    A Pallas kernel (a function the module passes to `pl.pallas_call` or `pl.kernel`, by name:
    `pallas.kernel_names`) writes its output through its Ref parameters (`o_ref[...] = v`):
    those stores are not reported, nor those into a parameter of a def nested in the kernel
    (`pltpu.run_scoped(body, pltpu.VMEM(...))` hands `body` scratch Refs). A helper outside the
    kernel that it calls with its Refs is not followed and can still be reported. Nor is `self.cache[...] = v` where the module's class sets `cache` to an
    NNX Variable (`nnx.Variable(...)`, `nnx.Param(...)`): `Variable.__setitem__` is how NNX
    replaces a Variable's value. A Variable reached another way (passed in, held in a list) is not
    recognised.

    ## Preview
    Reported by default where the stored-into name is bound in the function to a `jax.numpy`/`lax`
    call (`x = jnp.zeros(n)` then `x[i] = v`: it raises whether or not anything traces it). A store
    into anything else believed traced (a bare parameter of a function a transform of its own module
    traces, a value derived from one, an element or attribute, a function traced through another
    module's call) is shown only with `--preview`. On code nobody had prepared (the blind pools'
    first-contact labels) the first path was 28 real of 28 on four pools (and 1 real, 5 debatable on
    heldout14), a bare parameter 0 of 6 on three (Pallas kernel Refs; a dict of arrays passed to the
    jitted function), the rest 0 of 5 on three (a NumPy copy, a Python list, an `nnx.Variable`).
    `codemods/trace_time_semantics/preview.py`.

    ## Example
    ```python
    @jax.jit
    def bump(x, i, v):
        x = x * 2
        x[i] = v
        x[0] += 1.0
        return x
    ```

    ## Use instead
    ```python
    @jax.jit
    def bump(x, i, v):
        x = x * 2
        x = x.at[i].set(v)
        x = x.at[0].add(1.0)
        return x
    ```

    ## Fix
    `x[i] = v` becomes `x = x.at[i].set(v)`; `+=`, `-=`, `*=`, `/=`, `**=` become `.add`,
    `.subtract`, `.multiply`, `.divide`, `.power`; the other augmented operators become
    `x = x.at[i].set(x[i] OP v)` when the index has no calls (it is evaluated twice). Manual, with
    the reason, when the target is not a plain name (`self.x[i] = v`: an attribute of a pytree;
    `x[i][j] = v`: in NumPy a no-op when `x[i]` is a copy), when the assignment has several
    targets, or when the updated `x` is never read afterwards (the update was the function's
    effect on its caller's array: return the new array instead).

    ## Fix safety
    Safe for a plain name with `=`, `+=`, `-=`, `*=`, `**=` and the other operators on a static
    index. Unsafe (the message says which hazard) when another name aliases the array, for an
    augmented update on a traced index (repeated indices accumulate), and for `/=` (on an integer
    array `.divide` returns a float array where NumPy raises), and where the function is traced
    only because another module calls it (there the array may be a NumPy one, which has no
    `.at`), and where the array is only a parameter (no annotation, no array use, a static index):
    jit takes any pytree, and a dict or list argument has no `.at`. Differential verification runs the
    original eagerly on NumPy arrays (its intended semantics; on JAX arrays it always raises) and
    the rewrite under `jit` on JAX arrays.

    ## References
    - https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html
    - https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#in-place-updates
    """

    name = "in-place-update-on-traced-array"
    codes = (
        Code("JAX403", "in-place-update-on-traced-array", "`x[i] = v` / `x[i] += v` on a traced JAX array", "sometimes"),
    )
    prefilter = ITEM_STORES  # then could_match: a trace entry
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    follows_calls = True  # also in a file whose functions traced code elsewhere calls
    verify_reference = "eager"
    valid = (
        Valid(
            """
            import jax


            @jax.jit
            def bump(x, i, v):
                x = x * 2
                x = x.at[i].set(v)  # the functional update
                return x
            """
        ),
        Valid(
            """
            import jax
            import numpy as np


            @jax.jit
            def stats(x):
                parts = [x, x]
                parts[0] = x * 2  # a list being built
                table = np.zeros(3)
                table[0] = 1.0  # a NumPy array, not traced
                return parts[0] + parts[1] + table[0]
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax


            @jax.jit
            def smooth(x, i, v):
                x = x / 2
                x[i] = v
                x[-1] **= 2
                x[1:] //= 3
                return x
            """,
            fixed="""
            import jax


            @jax.jit
            def smooth(x, i, v):
                x = x / 2
                x = x.at[i].set(v)
                x = x.at[-1].power(2)
                x = x.at[1:].set(x[1:] // 3)
                return x
            """,
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def count(bins, idx):
                counts = jnp.zeros_like(bins)
                counts[idx] += 1.0  # a traced index: repeated indices add once each
                return counts
            """,
            fixed="""
            import jax
            import jax.numpy as jnp


            @jax.jit
            def count(bins, idx):
                counts = jnp.zeros_like(bins)
                counts = counts.at[idx].add(1.0)  # a traced index: repeated indices add once each
                return counts
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def clear(x):
                x = x * 2
                x[0] = 0.0
            """
        ),
    )

    @classmethod
    def passes_prefilter(cls, source: str) -> bool:
        """`Rule.passes_prefilter` with the `ITEM_STORES` test as one `ITEM_STORE` search, after the
        transform pattern (searched once per text for the rules that share it)."""
        return pattern_found(cls.prefilter_pattern, source) and pattern_found(ITEM_STORE, source)

    def could_match(self, tree: ast.Module, entries: ScreenEntries = NO_ENTRIES) -> bool:
        """`x[i] = v` / `x[i] += v` on a name that may be traced, in a function that may run under
        a trace, and that may be an array by the function's evidence (`ArrayScreen`)."""
        arrays: dict[int, ArrayScreen] = {}  # id of a function -> its evidence, once asked
        kernels: list[frozenset[str]] = []  # `pallas.kernel_names`, once a store asks

        def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
            root = traced_store_root(fn, n)
            if root is None:
                return False
            if not kernels:
                kernels.append(kernel_names(tree, fn.screen.names.qualify_ast))
            if fn.name in kernels[0] and root in fn.params:
                return False  # a Pallas kernel's Ref
            known = arrays.get(id(fn.node))
            if known is None:
                known = arrays[id(fn.node)] = ArrayScreen(fn)
            return known.may_be_array(root)

        return any_site(tree, may_flag, entries) or eager_store(tree, ImportMap.from_ast(tree).qualify_ast)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        kernels: frozenset[str] | None = None  # `pallas.kernel_names`, once a store asks
        for info in traced_functions(ctx):
            evidence: ArrayEvidence | None = None
            sites = list(own_sites(info, ctx))
            for node, stmt in sites:
                if isinstance(node, cst.Assign):
                    targets = [t.target for t in node.targets]
                elif isinstance(node, cst.AugAssign):
                    targets = [node.target]
                else:
                    continue
                subs = [t for t in targets if isinstance(t, cst.Subscript)]
                if not subs:
                    continue
                if kernels is None:
                    kernels = kernel_names(ctx.tree, ctx.names.qualify_ast)
                if _in_kernel(info, kernels) and stored_root_name(subs[0]) in info.params:
                    continue  # `o_ref[...] = v` in a Pallas kernel: a write into a mutable Ref
                if evidence is None:
                    evidence = ArrayEvidence(info, ctx.names)
                finding = self._check(ctx, info, evidence, node, subs, len(targets))
                if finding is not None:
                    yield finding
        yield from self._check_eager(ctx)

    def _check_eager(self, ctx: RuleContext) -> Iterator[Finding]:
        """Item stores in code nothing traces, into a name every binding of which is a
        `jax.numpy` constructor (`eager_arrays`): they raise `TypeError` on the first run."""
        jc = ctx.fact(JitContexts, jit_contexts)
        for info in jc.functions.values():
            if info.in_trace or not isinstance(info.node, cst.FunctionDef):
                continue
            stores = _own_item_stores(info.node)
            if not stores:
                continue
            arrays = eager_array_names_cst(info.node, ctx.names.qualify)
            if not arrays:
                continue
            evidence = None
            for node, subs, n_targets in stores:
                target = subs[0]
                root = target.value
                chain = []
                while isinstance(root, (cst.Subscript, cst.Attribute)):
                    chain.append(root)
                    root = root.value
                if not isinstance(root, cst.Name) or root.value not in arrays:
                    continue
                if any(isinstance(el.slice, cst.Index) and _is_string(el.slice.value) for el in target.slice):
                    continue
                name = root.value
                what = (
                    f"`{short(ctx, target)}` assigns into an immutable JAX array (`{name}` is made by "
                    "`jax.numpy`; this raises `TypeError` even outside `jit`)"
                )
                if chain:
                    fix = ctx.manual("a nested target: write `x = x.at[i, j].set(v)` if `x[i]` is a basic index")
                elif n_targets != 1 or len(subs) != 1:
                    fix = ctx.manual("several targets: write one `x = x.at[...].set(v)` per target")
                else:
                    if evidence is None:
                        evidence = ArrayEvidence(info, ctx.names)
                    fix = self._fix(ctx, info, evidence, node, target, name, eager=True)
                found = ctx.finding(self, "JAX403", target, message(what, fix), fix)
                yield preview.in_place_finding(found, constructed=True)

    def _check(self, ctx, info, evidence: ArrayEvidence, node, subs, n_targets) -> Finding | None:
        facts = info.facts
        target = subs[0]
        if any(isinstance(el.slice, cst.Index) and _is_string(el.slice.value) for el in target.slice):
            return None  # `obj.data["params"] = v`: a string key stores into a dict, never into an array
        root = target.value
        chain = []
        while isinstance(root, (cst.Subscript, cst.Attribute)):
            chain.append(root)
            root = root.value
        if not isinstance(root, cst.Name):
            return None
        name = root.value
        if len(chain) == 1 and isinstance(chain[0], cst.Attribute) and self._variable_attribute(ctx, info, chain[0]):
            return None  # `self.cache[...] = v` on an `nnx.Variable`: `Variable.__setitem__` replaces its value
        if not facts.traced(root, node) or not evidence.is_array(name) or facts.is_sequence(root):
            if chain and isinstance(chain[-1], cst.Attribute):
                return None  # `self.x[i] = v`: see below only when the root is a traced array
            return None
        what = f"`{short(ctx, target)}` assigns into an immutable JAX array"
        if chain:
            fix = ctx.manual(
                "a nested target: write `x = x.at[i, j].set(v)` if `x[i]` is a basic index "
                "(in NumPy `x[i][j] = v` is a no-op when `x[i]` is a copy)"
            )
        elif n_targets != 1 or len(subs) != 1:
            fix = ctx.manual("several targets: write one `x = x.at[...].set(v)` per target")
        else:
            fix = self._fix(ctx, info, evidence, node, target, name)
        found = ctx.finding(self, "JAX403", target, message(what + info.traced_because(), fix), fix)
        made = _made_by_jax(evidence, name, ctx.names.qualify)
        return preview.in_place_finding(found, constructed=made)

    @staticmethod
    def _variable_attribute(ctx: RuleContext, info, attribute: cst.Attribute) -> bool:
        """`attribute` is `self.X` in a method, and the method's class sets `X` to an NNX Variable
        only (avitai/opifex@9f906dc mpc.py: `self.warm_start_cache[...] = result.solution`)."""
        owner = info
        while owner.parent is not None:
            owner = owner.parent
        if not owner.is_method or not owner.positional or not isinstance(attribute.value, cst.Name):
            return False
        if attribute.value.value != owner.positional[0]:
            return False
        classes = [st for st in ctx.module.body if isinstance(st, cst.ClassDef) and st.name.value == owner.class_name]
        return len(classes) == 1 and attribute.attr.value in variable_attributes(classes[0], ctx.names.qualify)

    def _fix(self, ctx, info, evidence, node, target: cst.Subscript, name: str, eager: bool = False) -> Fix:
        """The rewrite of one item store; `eager`: in code nothing traces, into a name only
        `jax.numpy` constructors bind (an index there may be any array: it counts as traced)."""
        traced = (lambda e, at: not isinstance(e, (cst.Integer, cst.UnaryOperation))) if eager else info.facts.traced
        if not _read_after(info, node, name):
            return ctx.manual(
                f"`{name}` is not read after the update: the in-place update was the function's effect "
                f"on its caller's array; return the new `{name}` instead"
            )
        hazards: list[str] = []
        if not eager and not certainly_traced(ctx.fact(JitContexts, jit_contexts), info):
            hazards.append(f"traced only through a call in another module; if `{name}` is a NumPy array there, it has no `.at`")
        if _aliased(info, evidence, name):
            hazards.append(f"another name aliases `{name}` (NumPy would update it too)")
        index_traced = any(
            isinstance(el.slice, cst.Index) and traced(el.slice.value, node) for el in target.slice
        ) or any(
            isinstance(el.slice, cst.Slice)
            and any(p is not None and traced(p, node) for p in (el.slice.lower, el.slice.upper, el.slice.step))
            for el in target.slice
        )
        if not eager and not index_traced and _only_a_parameter(evidence, name):
            # jit takes any pytree: a dict or list argument arrives as a dict or list, and a store
            # into it is fine (sukhdeep2/jax_healpix@6e77c6c SPHT_jax.py:317, `maps[s] = ...` into a
            # dict of maps). A traced index would rule that out: a tracer keys no dict or list.
            hazards.append(
                f"nothing here shows `{name}` is an array rather than a dict or list argument (jit takes any "
                "pytree), which has no `.at`"
            )
        index_text = code(ctx, target)[len(name) :]  # `[i, 1:]`, as written
        at = f"{name}.at{index_text}"
        value = code(ctx, node.value).strip()
        if isinstance(node, cst.Assign):
            call = f"{at}.set({_arg(node.value, value)})"
            verb = "set"
        else:
            op = code(ctx, node.operator).strip()
            if op in AT_METHODS:
                verb = AT_METHODS[op]
                call = f"{at}.{verb}({_arg(node.value, value)})"
                if index_traced:
                    hazards.append(f"repeated indices in a traced index apply `.{verb}` once each (NumPy: once)")
                if verb == "divide":
                    hazards.append("on an integer array `.divide` returns floats (NumPy raises)")
            elif op in OTHER_OPS:
                if _has_call(target.slice):
                    return ctx.manual(f"`{op}` has no `.at` method and the index calls a function: write it by hand")
                verb = "set"
                call = f"{at}.set({code(ctx, target).strip()} {OTHER_OPS[op]} {_paren(node.value, value)})"
                if index_traced:
                    hazards.append("repeated indices in a traced index: which update wins is unspecified")
            else:
                return ctx.manual(f"`{op}` on an item has no `.at` form")
        text = f"{name} = {call}"
        new = cst.parse_statement(fits(ctx, node, text), config=parsing_config(ctx.module)).body[0]
        new = new.with_changes(semicolon=node.semicolon)
        safety = Safety.UNSAFE if hazards else Safety.SAFE
        title = f"use `{name} = {name}.at[...].{verb}(...)`" + (f" (unsafe: {'; '.join(hazards)})" if hazards else "")
        return ctx.rewrite(title, safety, replace={node: new})


def _only_a_parameter(evidence: ArrayEvidence, name: str) -> bool:
    """`name` is an array only because it is a traced parameter: no annotation says so and the
    function never uses it as one (`x.shape`, `x.at`), so it may be any pytree."""
    values = evidence.bindings.get(name) or []
    return (
        name not in evidence.used_as_array
        and bool(values)
        and all(isinstance(v, cst.Param) and v.annotation is None for v in values)
    )


def _made_by_jax(evidence: ArrayEvidence, name: str, qualify) -> bool:
    """`name` (which `evidence` takes for an array) is no parameter and some binding of it in the
    function is a `jax.numpy`/`lax` call (`xy = jnp.ones(n)`, `h = jnp.zeros_like(v)`): a JAX array
    whatever its inputs, so an item store into it raises, traced or not (`preview`: the default path)."""
    values = evidence.bindings.get(name) or []
    if any(isinstance(v, cst.Param) for v in values):
        return False
    exprs = [v[1] if isinstance(v, tuple) else v for v in values]
    return any(isinstance(e, cst.Call) and is_staged_call_name(qualify(e.func)) for e in exprs)


def _own_item_stores(func: cst.FunctionDef) -> list[tuple[cst.CSTNode, list[cst.Subscript], int]]:
    """The item stores of `func`'s own body (nested defs and classes left out): (the statement,
    its subscript targets, how many targets it has)."""
    out = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is not func and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(n, cst.Assign):
                targets = [t.target for t in n.targets]
            elif isinstance(n, cst.AugAssign):
                targets = [n.target]
            else:
                return True
            subs = [t for t in targets if isinstance(t, cst.Subscript)]
            if subs:
                out.append((n, subs, len(targets)))
            return True

    walk(func, V())
    return out


# -- the decision and the fix ------------------------------------------------------------------
def _is_string(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _arg(node: cst.BaseExpression, text: str) -> str:
    """`text` as a call argument (a bare tuple needs parentheses)."""
    if isinstance(node, cst.Tuple) and not node.lpar:
        return f"({text})"
    return text


def _paren(node: cst.BaseExpression, text: str) -> str:
    if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer, cst.Float)) or node.lpar:
        return text
    return f"({text})"


def _has_call(node) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            nonlocal found
            found = True

    for el in node:
        walk(el, V())
    return found


def _read_after(info: FuncInfo, stmt: cst.CSTNode, name: str) -> bool:
    """Is `name` read after `stmt`: later in the function, anywhere in a loop around it, or by a
    nested function? Reads inside the statement itself (its value, its index) do not count."""
    body = info.node
    reads: list[tuple[tuple[cst.CSTNode, ...], bool]] = []  # (loops around the read, after the statement)
    state = {"inside": False, "after": False, "stmt_loops": ()}

    class V(cst.CSTVisitor):
        def __init__(self) -> None:
            self.loops: list[cst.CSTNode] = []
            self.nested = 0

        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is stmt:
                state["inside"] = True
                state["stmt_loops"] = tuple(self.loops)
            if isinstance(n, (cst.For, cst.While)):
                self.loops.append(n)
            if n is not body and isinstance(n, (cst.FunctionDef, cst.Lambda)):
                self.nested += 1
            if isinstance(n, cst.Name) and n.value == name and not state["inside"]:
                reads.append((tuple(self.loops), state["after"] or self.nested > 0))
            return True

        def on_leave(self, n: cst.CSTNode) -> None:
            if n is stmt:
                state["inside"] = False
                state["after"] = True
            if isinstance(n, (cst.For, cst.While)):
                self.loops.pop()
            if n is not body and isinstance(n, (cst.FunctionDef, cst.Lambda)):
                self.nested -= 1

    walk(body, V())
    stmt_loops = set(state["stmt_loops"])
    for loops_of_read, after in reads:
        if after:
            return True
        if stmt_loops & set(loops_of_read):
            return True  # read in a loop around the update: the next trip reads it
    return False


def _aliased(info: FuncInfo, evidence: ArrayEvidence, name: str) -> bool:
    """Another name shares `name`'s memory in NumPy terms: `y = x`, `x = y`, or `x = m[...]`."""
    for value in evidence.bindings.get(name, ()):
        if isinstance(value, (cst.Name, cst.Subscript)):
            return True
    for other, values in evidence.bindings.items():
        if other != name and any(isinstance(v, cst.Name) and v.value == name for v in values):
            return True
    return False


# `InPlaceUpdateCommand`: the libcst codemod command, made on first access
__getattr__ = commands_for(InPlaceUpdateRule)


def _in_kernel(info: FuncInfo, kernels: frozenset[str]) -> bool:
    """`info` is a Pallas kernel or a def nested in one, whose parameters the kernel hands Refs
    (its own, or scratch from `run_scoped`): sgl-project/sglang-jax@cddbf6f1:python/sgl_jax/srt/
    kernels/fused_moe/v1/kernel.py:915, `d2e_count_vmem[my_id] = sizes` in `_all_reduce_metadata`,
    a wrong JAX403 whose safe `.at[].set` fix would drop the store."""
    while info is not None:
        if info.name in kernels:
            return True
        info = info.parent
    return False
