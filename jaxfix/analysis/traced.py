"""Traced-versus-static values inside one function that runs under a JAX trace.

A value is *traced* when it is a non-static parameter of a traced function, the
result of a `jax.numpy`/`lax`/`random`/`nn`/`scipy` operation inside the trace (even
`jnp.ones(3)` is staged out under jit), or anything computed from a traced value. It
is *static* when it is a literal, a module-level name, a static argument,
`.shape`/`.ndim`/`.dtype`/`.size` of anything, the result of a dtype/shape query
(`len`, `isinstance`, `jnp.iscomplexobj`, `jnp.issubdtype`, `jax.dtypes.*`,
`lax.axis_size`, `getattr(obj, "name", default)`...), an `is None` test, the counter
of `enumerate`, or computed from static values only (the table is
`static_values`). Other `jax.*` functions (utilities, `jax._src` helpers) are traced
only when given a traced argument. `tree_map(f, ...)` is static when `f` returns a
static value on traced leaves. A `CallOracle` (`static_helpers.ModuleCallOracle`)
decides calls of the module's own helpers (static when the body only reads shapes or
dtypes) and of functions whose body is out of sight (unknown: not traced, since an
undecidable value is never a reason to flag).

The truth value of a Python tuple or list is its length: `test_traced` (for `if`,
`while`, `and`/`or`/`not` operands) treats displays, `tuple(...)`/`list(...)`,
parameters annotated or always passed as sequences, `*args`, and locals only ever
assigned sequences as static, even when their elements are traced (a sequence a nested `f`
returns as aux output of `value_and_grad(f, has_aux=True)` stays one: `aux_outputs`).

The walk is flow-sensitive in statement order (`traced_walk`): it records, for every
statement, the set of local names traced just before it, so a rule asks
`facts.traced(expr, stmt)`. This module holds `FunctionFacts` (the per-expression decision,
`expr_traced` and its call, comparison and truth-test helpers, which a subclass may override)
and `analyse_function`; the facts it reads off syntax alone are in `python_values`, the jax
calls staged out on any input in `staged_calls`, and a body's bound names in `body_facts`.

Nested functions and lambdas are separate `FunctionFacts`; their free variables
are looked up in the enclosing function's names traced anywhere (`all_traced`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import libcst as cst

from jaxfix.analysis.aux_outputs import returned_elements
from jaxfix.analysis.body_facts import assigned_names, mapping_names, target_names
from jaxfix.analysis.names import ImportMap, dotted_name
from jaxfix.analysis.python_values import (
    annotation_is_sequence,
    is_str_literal,
    object_expressions,
    python_callable_params,
    read_off_known,
)
from jaxfix.analysis.scopes import param_names
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.static_values import (
    ARRAY_LISTS,
    ITEM_METHODS,
    KEY_METHODS,
    LEAF_LISTS,
    STATIC,
    TREE_KEY_CLASSES,
    TREE_MAP_NAMES,
    UNKNOWN,
    CallOracle,
    is_folded_on_a_number,
    is_object_method,
    is_static_attr,
    is_static_method,
    returns_untraced,
)
from jaxfix.analysis.traced_walk import StatementWalker
from jaxfix.analysis.transforms import TRACED_RESULT_TRANSFORMS
from jaxfix.analysis.walk import children, walk


@dataclass(eq=False)
class FunctionFacts:
    """Which names are traced where, inside one function body."""

    node: cst.FunctionDef | cst.Lambda
    names: ImportMap
    entry_traced: frozenset[str]
    outer_traced: Callable[[str], bool]
    locals: set[str] = field(default_factory=set)
    before: dict[cst.CSTNode, frozenset[str]] = field(default_factory=dict)
    all_traced: set[str] = field(default_factory=set)
    exit_traced: frozenset[str] = frozenset()
    # `self`-like parameter name and the fields of its class that hold static (non-array) values
    receiver: str | None = None
    static_fields: frozenset[str] = frozenset()
    # other parameters annotated with a class: name -> the class's fields that hold Python data
    # (`saveat: SaveAt` with `dense: bool`: `saveat.dense` is static)
    param_fields: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # names that hold a Python tuple/list wherever they are read (parameters declared or always
    # passed as sequences, locals only ever assigned sequences): their truth value is static
    sequence_params: frozenset[str] = frozenset()
    _sequences: frozenset[str] | None = None
    _objects: frozenset[str] | None = None
    _mappings_held: frozenset[str] | None = None
    _callables: frozenset[str] | None = None
    # attribute names that are static on any object (properties of the module's pytree classes
    # that return Python values, see JitContexts.static_attrs)
    static_attrs: frozenset[str] = frozenset()
    # what the module knows about calls the table does not decide (its helpers, its imports)
    calls: CallOracle | None = None
    # set by the proof only (`proven_traced`): the names whose class this file shows (the receiver,
    # parameters annotated with a class); a data attribute read off anything else may be Python
    # aux data of a class the file does not show, so it is not taken as traced
    known_objects: frozenset[str] | None = None
    # set by the proof only: the receiver's attributes its class shows, when a base class of it is
    # out of sight (None: every base is in sight); an attribute such a base declares may be one of
    # its static fields (`eqx.field(static=True)` in another module), so it is not taken as traced
    receiver_attributes: frozenset[str] | None = None

    # -- queries ----------------------------------------------------------
    @property
    def mappings(self) -> frozenset[str]:
        """Names that hold a mapping (`body_facts.mapping_names`)."""
        if self._mappings_held is None:
            self._mappings_held = mapping_names(self.node, KEY_METHODS | ITEM_METHODS)
        return self._mappings_held

    @property
    def sequences(self) -> frozenset[str]:
        """Names holding a Python tuple/list wherever read (computed on first use: truth tests only)."""
        if self._sequences is None:
            self._sequences = frozenset()  # while computing: no name is known yet
            self._sequences = frozenset(_sequence_names(self))
        return self._sequences
    def env_before(self, stmt: cst.CSTNode) -> frozenset[str]:
        return self.before.get(stmt, frozenset(self.all_traced))

    def traced(self, expr: cst.BaseExpression, stmt: cst.CSTNode | None = None) -> bool:
        env = self.env_before(stmt) if stmt is not None else frozenset(self.all_traced)
        if stmt is not None:
            env = self._comprehension_env(stmt, expr, env)
        return self.expr_traced(expr, env)

    def _comprehension_env(self, stmt: cst.CSTNode, expr: cst.BaseExpression, env):
        """`env` with the targets of the comprehensions around `expr` in `stmt` bound as they
        iterate: in `[int(x / 2) for x in Fx.shape]` the `x` read is a dimension, not the traced
        parameter `x` it shadows (ucl-bug/jwave@2bbf4b4 signal_processing.py:73)."""
        path = _path_to(stmt, expr)
        if not path:
            return env
        inner = set(env)
        for node in path:
            if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                self._bind_comprehension(node, inner)
        return inner

    def _bind_comprehension(self, e, inner: set[str]) -> None:
        """Bind, in `inner`, the targets of each `for` of the comprehension `e` as it iterates."""
        comp = e.for_in
        while comp is not None:
            for name, traced in self.loop_bindings(comp.target, comp.iter, inner):
                if traced:
                    inner.add(name)
                else:
                    inner.discard(name)
            comp = comp.inner_for_in

    def name_traced(self, name: str, env: Iterable[str]) -> bool:
        if name in env:
            return True
        if name in self.locals:
            return False
        return self.outer_traced(name)

    def expr_traced(self, e: cst.BaseExpression, env: frozenset[str] | set[str]) -> bool:  # noqa: C901
        t = lambda x: self.expr_traced(x, env)  # noqa: E731
        # `kind is`: libcst's classes are concrete, and each `isinstance` against them runs ABCMeta's
        # check (a call went through a dozen before its own test)
        kind = type(e)
        if kind is cst.Name:
            return self.name_traced(e.value, env)
        if kind in (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString):
            return False
        if kind is cst.FormattedString:
            return False
        if kind is cst.Attribute:
            if is_static_attr(e.attr.value) or e.attr.value in self.static_attrs:
                return False
            if (
                self.receiver is not None
                and isinstance(e.value, cst.Name)
                and e.value.value == self.receiver
                and e.attr.value in self.static_fields
            ):
                return False
            if isinstance(e.value, cst.Name) and e.attr.value in self.param_fields.get(e.value.value, ()):
                return False
            if self.known_objects is not None and not read_off_known(e, self.known_objects):
                return False
            if (
                self.receiver_attributes is not None
                and isinstance(e.value, cst.Name)
                and e.value.value == self.receiver
                and e.attr.value not in self.receiver_attributes
            ):
                return False  # inherited from a base class out of sight: maybe a static field
            return t(e.value)
        if kind is cst.Subscript:
            if t(e.value):
                return True
            if isinstance(e.value, cst.Attribute) and is_static_attr(e.value.attr.value):
                # `x.shape[axis]`: a tuple of ints, which a traced index could not read at all
                return False
            for el in e.slice:
                sl = el.slice
                if isinstance(sl, cst.Index) and t(sl.value):
                    return True
                if isinstance(sl, cst.Slice) and any(p is not None and t(p) for p in (sl.lower, sl.upper, sl.step)):
                    return True
            return False
        if kind is cst.Call:
            return self._call_traced(e, env)
        if kind is cst.BinaryOperation:
            return t(e.left) or t(e.right)
        if kind is cst.UnaryOperation:
            return t(e.expression)
        if kind is cst.BooleanOperation:
            return t(e.left) or t(e.right)
        if kind is cst.Comparison:
            operands = (e.left, *(c.comparator for c in e.comparisons))
            if any(self._python_operand(x) for x in operands) and not any(
                isinstance(x, cst.Name) and x.value in self.entry_traced for x in operands
            ):
                # a comparison with a string literal compares strings (`key == "pixels"`), but a
                # string given to a jitted function as a traced argument is a bug of its own
                return False
            if all(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in e.comparisons):
                return self._membership_traced(e, env)
            return t(e.left) or any(t(c.comparator) for c in e.comparisons)
        if kind is cst.IfExp:
            return t(e.test) or t(e.body) or t(e.orelse)
        if kind in (cst.Tuple, cst.List, cst.Set):
            return any(t(el.value) for el in e.elements)
        if kind is cst.Dict:
            return any(
                t(el.value) or (isinstance(el, cst.DictElement) and t(el.key)) for el in e.elements
            )
        if kind is cst.NamedExpr:
            return t(e.value)
        if kind in (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp):
            return self._comp_traced(e, env)
        if kind is cst.StarredElement:
            return t(e.value)
        if kind is cst.Lambda:
            return False
        return False

    def _python_operand(self, e: cst.BaseExpression) -> bool:
        """A string literal or a key path entry built here (`GetAttrKey("w")`): what it is compared
        with is a Python value of the same kind."""
        return is_str_literal(e) or (isinstance(e, cst.Call) and self.names.qualify(e.func) in TREE_KEY_CLASSES)

    def _membership_traced(self, e: cst.Comparison, env) -> bool:
        """Identity is Python's; `k in params` looks a key up in a mapping (haiku's
        `if k1 in a and k2 in a[k1]`), which stays a Python bool. Only membership in a display
        compares with `==`: `x in (a, b)` is traced when `x` or an element is. (`k in tracer` would
        be traced too, but is not how JAX code is written; precision first.)"""
        left = e.left
        for c in e.comparisons:
            display = isinstance(c.operator, (cst.In, cst.NotIn)) and isinstance(c.comparator, (cst.List, cst.Tuple, cst.Set))
            if display and (self.expr_traced(left, env) or any(self.expr_traced(el.value, env) for el in c.comparator.elements)):
                return True
            left = c.comparator
        return False

    def _comp_traced(self, e, env) -> bool:
        inner = set(env)
        self._bind_comprehension(e, inner)
        parts = [e.key, e.value] if isinstance(e, cst.DictComp) else [e.elt]
        return any(self.expr_traced(p, inner) for p in parts)

    def _call_traced(self, e: cst.Call, env) -> bool:
        qual = self.names.qualify(e.func)
        if returns_untraced(qual):
            return False
        if is_folded_on_a_number(qual, bool(e.args) and isinstance(e.args[0].value, (cst.Integer, cst.Float))):
            return False
        if isinstance(e.func, cst.Attribute) and is_static_method(e.func.attr.value, qual):
            return False
        if qual in TREE_MAP_NAMES and self._maps_to_static(e, env):
            return False
        if isinstance(e.func, cst.Name) and e.func.value in self._python_callables():
            return False
        if self.calls is not None and not (
            isinstance(e.func, cst.Name) and e.func.value in self.locals and not self.calls.knows_local(e.func.value)
        ):
            verdict = self.calls.call_result(e)
            if verdict in (STATIC, UNKNOWN):
                return False
        if qual == "getattr" and len(e.args) >= 2 and isinstance(e.args[1].value, cst.SimpleString):
            if len(e.args) >= 3:
                # probing an optional attribute with a fallback: an object's configuration, not an array
                return False
            attr = e.args[1].value.evaluated_value
            if isinstance(attr, str) and attr.isidentifier():
                return self.expr_traced(cst.Attribute(value=e.args[0].value, attr=cst.Name(attr)), env)
        if qual in ("range", "enumerate", "zip", "reversed"):
            return any(self.expr_traced(a.value, env) for a in e.args)
        args_traced = any(self.expr_traced(a.value, env) for a in e.args)
        if args_traced:
            return True
        if isinstance(e.func, cst.Attribute):
            # a method of a traced value (`x.sum()`; not an object's own, `is_object_method`), or a module function
            if self.expr_traced(e.func.value, env):
                return not is_object_method(e.func)
        if is_staged_call_name(qual):
            # inside a trace every jax.numpy/lax/random operation is staged out, even on constants
            return True
        if isinstance(e.func, cst.Call) and is_staged_call_name(self.names.qualify(e.func.func)):
            return True
        if isinstance(e.func, cst.Call) and self.names.qualify(e.func.func) in TRACED_RESULT_TRANSFORMS:
            return True  # `jax.vmap(f)(...)`, `eqx.filter_value_and_grad(loss)(model)`: a transformed function, staged out
        return False

    def _python_callables(self) -> frozenset[str]:
        """Parameters annotated as callables returning a Python value (`python_values`)."""
        if self._callables is None:
            self._callables = python_callable_params(self.node, self.names.qualify)
        return self._callables

    def _maps_to_static(self, e: cst.Call, env) -> bool:
        """`tree_map(f, *trees)` whose `f` returns a static value on any leaves: a lambda whose body
        is static with its parameters traced, or a function the oracle knows returns static values."""
        args = [a for a in e.args if a.keyword is None and not a.star]
        func = next((a.value for a in e.args if a.keyword is not None and a.keyword.value == "f"), None)
        if func is None and args:
            func = args[0].value
        if isinstance(func, cst.Lambda):
            inner = analyse_function(
                func,
                self.names,
                param_names(func.params),
                lambda name: self.name_traced(name, env),
                static_attrs=self.static_attrs,
                calls=self.calls,
            )
            return not inner.traced(func.body)
        if isinstance(func, (cst.Name, cst.Attribute)) and self.calls is not None:
            if isinstance(func, cst.Name) and func.value in self.locals:
                return False
            return self.calls.returns_static(func)
        return False

    def loop_bindings(self, target, it, env) -> list[tuple[str, bool]]:
        """(name, traced) for the names a `for` target binds. The counter of `enumerate` is a Python
        int; `zip(a, b)` pairs each target element with its own iterable; iterating a Python
        tuple/list of traced values gives traced values, but a static number of them."""
        if isinstance(it, cst.Call) and isinstance(target, (cst.Tuple, cst.List)):
            qual = self.names.qualify(it.func)
            elements = [el.value for el in target.elements]
            args = [a for a in it.args if a.keyword is None and not a.star]
            keywords = [a for a in it.args if a.keyword is not None]
            if (
                any(isinstance(el, cst.StarredElement) for el in target.elements)
                or any(a.star for a in it.args)
                or any(a.keyword.value != "strict" for a in keywords)  # `zip(a, b, strict=False)` pairs the same
            ):
                args = []
            if qual == "enumerate" and len(elements) == 2 and len(args) == 1:
                out = [(n, False) for n in target_names(elements[0])]
                return out + self.loop_bindings(elements[1], args[0].value, env)
            if qual == "zip" and args and len(elements) == len(args):
                out = []
                for el, arg in zip(elements, args):
                    out.extend(self.loop_bindings(el, arg.value, env))
                return out
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and not it.args:
            method = it.func.attr.value
            if method in KEY_METHODS:
                return [(n, False) for n in target_names(target)]
            if method in ITEM_METHODS and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
                key, value = (el.value for el in target.elements)
                if not isinstance(key, cst.StarredElement) and not isinstance(value, cst.StarredElement):
                    traced = self.expr_traced(it.func.value, env)
                    return [(n, False) for n in target_names(key)] + [(n, traced) for n in target_names(value)]
        if isinstance(it, cst.Name) and it.value in self.mappings:
            return [(n, False) for n in target_names(target)]  # a mapping's keys
        if isinstance(it, cst.Call) and self.names.qualify(it.func) == "range":
            # `range` takes only Python ints: given a tracer it raises before the first trip (the
            # bug is the `range` call, JAX303), so in every trip that runs the counter is an int
            # (chrischizinski/pradel-jax@d911295 tests/test_optimization_simple.py:97, `for t in range(first,
            # last)` over traced bounds, then `if t + 1 < n_occasions`: wrong)
            return [(n, False) for n in target_names(target)]
        if isinstance(it, cst.Call) and self.names.qualify(it.func) in ("reversed", "list", "tuple", "sorted"):
            if len(it.args) == 1 and it.args[0].keyword is None and not it.args[0].star:
                return self.loop_bindings(target, it.args[0].value, env)
        traced = self.expr_traced(it, env)
        return [(n, traced) for n in target_names(target)]

    # -- truth tests ----------------------------------------------------------
    def test_traced(self, expr: cst.BaseExpression, stmt: cst.CSTNode | None = None) -> bool:
        """Whether `bool(expr)` (an `if`/`while` test, an operand of `and`/`or`/`not`) needs a traced
        value. Like `traced`, except that the truth of a Python tuple or list is its length, known
        at trace time even when its elements are traced."""
        env = self.env_before(stmt) if stmt is not None else frozenset(self.all_traced)
        return self._test_traced(expr, env)

    def _test_traced(self, e: cst.BaseExpression, env) -> bool:
        if isinstance(e, cst.BooleanOperation):
            return self._test_traced(e.left, env) or self._test_traced(e.right, env)
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Not):
            return self._test_traced(e.expression, env)
        if isinstance(e, cst.NamedExpr):
            return self._test_traced(e.value, env)
        if self.is_sequence(e) or self.holds_object(e):
            return False
        return self.expr_traced(e, env)

    def holds_object(self, e: cst.BaseExpression) -> bool:
        """A name or attribute chain the function also reads a public attribute of that no array
        has (`dynamic_scale.value_and_grad(...)` after `if dynamic_scale:`, flax's ImageNet step):
        it holds an object, whose truth (None or not) is a Python bool even when its leaves are
        traced."""
        if not isinstance(e, (cst.Name, cst.Attribute)):
            return False
        if self._objects is None:
            self._objects = frozenset()  # while computing
            self._objects = frozenset(object_expressions(self.node) | self._mappings())
        return dotted_name(e) in self._objects

    def _mappings(self) -> set[str]:
        """Names the function unpacks with `**name`, or merges into a dict of its own with
        `d.update(name)`: mappings, whose truth is their length (jumanji's evaluator:
        `extras = state.timestep.extras; if extras: metrics.update(extras)`)."""
        found: set[str] = set()
        facts = self

        class V(cst.CSTVisitor):
            def visit_Arg(self, n: cst.Arg) -> None:
                if n.star == "**" and isinstance(n.value, cst.Name):
                    found.add(n.value.value)

            def visit_StarredDictElement(self, n: cst.StarredDictElement) -> None:
                if isinstance(n.value, cst.Name):
                    found.add(n.value.value)

            def visit_Call(self, n: cst.Call) -> None:
                f = n.func
                if (
                    isinstance(f, cst.Attribute)
                    and f.attr.value == "update"
                    and isinstance(f.value, cst.Name)
                    and len(n.args) == 1
                    and n.args[0].keyword is None
                    and not n.args[0].star
                    and isinstance(n.args[0].value, cst.Name)
                    and facts.is_sequence(f.value)
                ):
                    found.add(n.args[0].value.value)

        walk(self.node, V())
        return found

    def is_sequence(self, e: cst.BaseExpression) -> bool:
        """A Python tuple or list (not an array): a display, a comprehension, `tuple(...)`/`list(...)`,
        or a name that only ever holds one of those (see `sequences`)."""
        if isinstance(e, (cst.Tuple, cst.List, cst.ListComp, cst.Dict, cst.Set, cst.DictComp, cst.SetComp)):
            return True
        if isinstance(e, cst.Call) and (
            self.names.qualify(e.func)
            in ("tuple", "list", "dict", "set", "frozenset", "sorted", *LEAF_LISTS, *ARRAY_LISTS)
        ):
            return True
        if isinstance(e, cst.BinaryOperation):
            # `set(subs.keys()) - seen` (penzai's `unseen`), `a + [b]`: a set or sequence again; `+`
            # needs both sides (`[1] + array` is an array)
            if isinstance(e.operator, (cst.Subtract, cst.BitOr, cst.BitAnd, cst.BitXor)):
                return self.is_sequence(e.left)
            if isinstance(e.operator, cst.Add):
                return self.is_sequence(e.left) and self.is_sequence(e.right)
            return False
        if isinstance(e, cst.Name):
            return e.value in self.sequences
        return False


def _sequence_names(facts: FunctionFacts) -> set[str]:
    """Parameters and locals that hold a Python tuple/list (or dict/set) wherever they are read:
    parameters annotated `Sequence[...]`/`tuple[...]`/`list[...]` or known to be passed sequences
    (`facts.sequence_params`), `*args`/`**kwargs`, and locals every assignment of which is a display,
    a comprehension or `tuple(...)`/`list(...)` (a parameter reassigned must keep being one)."""
    node = facts.node
    params = node.params
    seq: set[str] = set(facts.sequence_params)
    for p in (*params.posonly_params, *params.params, *params.kwonly_params):
        if p.annotation is not None and annotation_is_sequence(facts.names, p.annotation.annotation):
            seq.add(p.name.value)
    if isinstance(params.star_arg, cst.Param):
        seq.add(params.star_arg.name.value)
    if params.star_kwarg is not None:
        seq.add(params.star_kwarg.name.value)
    if isinstance(node, cst.Lambda):
        return seq
    values: dict[str, list[cst.BaseExpression | None]] = {}

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return n is node

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, n: cst.ClassDef) -> bool:
            return False

        def visit_Assign(self, n: cst.Assign) -> None:
            for t in n.targets:
                if isinstance(t.target, cst.Name):
                    values.setdefault(t.target.value, []).append(n.value)
                else:
                    aux = returned_elements(facts.names.qualify, node, t.target, n.value)
                    for name in target_names(t.target):
                        values.setdefault(name, []).append(cst.Tuple([]) if _all_sequences(facts, aux.get(name)) else None)

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            if isinstance(n.target, cst.Name) and n.value is not None:
                ok = annotation_is_sequence(facts.names, n.annotation.annotation)
                values.setdefault(n.target.value, []).append(n.value if not ok else cst.Tuple([]))

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            if isinstance(n.target, cst.Name):
                values.setdefault(n.target.value, []).append(n.value)

        def visit_NamedExpr(self, n: cst.NamedExpr) -> None:
            if isinstance(n.target, cst.Name):
                values.setdefault(n.target.value, []).append(n.value)

    walk(node, V())
    candidates = {
        name
        for name, vals in values.items()
        if (name in seq or name not in set(param_names(params))) and all(v is not None for v in vals)
    }
    # names bound some other way too (loop targets, `with ... as`, imports): not known
    other = assigned_names(node) - set(values)
    candidates -= other
    for _ in range(3):
        facts._sequences = frozenset(seq | candidates)
        keep = {n for n in candidates if all(facts.is_sequence(v) for v in values[n])}
        if keep == candidates:
            break
        candidates = keep
    # a parameter reassigned something else is no longer known to be one
    for name in list(seq):
        if name in values and not all(facts.is_sequence(v) for v in values[name] if v is not None):
            seq.discard(name)
        if name in values and any(v is None for v in values[name]):
            seq.discard(name)
    return seq | candidates


def _all_sequences(facts: FunctionFacts, found) -> bool:
    """Every (def, expression) `aux_outputs.returned_elements` found is a sequence in its def."""
    inner = {}
    for d, e in found or ():
        if d not in inner:
            inner[d] = FunctionFacts(node=d, names=facts.names, entry_traced=frozenset(), outer_traced=lambda _: False)
        if not inner[d].is_sequence(e):
            return False
    return bool(found)


def analyse_function(
    node: cst.FunctionDef | cst.Lambda,
    names: ImportMap,
    entry_traced: Iterable[str],
    outer_traced: Callable[[str], bool] = lambda name: False,
    receiver: str | None = None,
    static_fields: Iterable[str] = (),
    sequence_params: Iterable[str] = (),
    static_attrs: Iterable[str] = (),
    calls: CallOracle | None = None,
    param_fields: Mapping[str, frozenset[str]] | None = None,
    known_objects: frozenset[str] | None = None,
    facts_type: type[FunctionFacts] | None = None,
    receiver_attributes: frozenset[str] | None = None,
) -> FunctionFacts:
    """The facts of one function body; `facts_type`, a subclass of FunctionFacts that propagates
    less (`codemods.traced_control_flow.evidence`: which evidence a site needs), walks it instead."""
    facts = (facts_type or FunctionFacts)(
        known_objects=known_objects,
        receiver_attributes=receiver_attributes,
        param_fields=param_fields or {},
        node=node,
        names=names,
        entry_traced=frozenset(entry_traced),
        outer_traced=outer_traced,
        receiver=receiver,
        static_fields=frozenset(static_fields),
        sequence_params=frozenset(sequence_params),
        static_attrs=frozenset(static_attrs),
        calls=calls,
    )
    StatementWalker(facts).run()
    return facts


def _path_to(root: cst.CSTNode, target: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes from `root` down to `target` (both included), or [] when `target` is not under
    `root`. Asked only for a reported site's statement, usually one line."""
    stack: list[tuple[cst.CSTNode, int]] = [(root, 0)]
    path: list[cst.CSTNode] = []
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        path.append(node)
        if node is target:
            return path
        stack.extend((child, depth + 1) for child in reversed(list(children(node))))
    return []
