"""A read-only traversal of libcst trees, about six times cheaper than `node.visit(visitor)`.

`CSTNode.visit` rebuilds every node it passes through (each `_visit_and_replace_children`
constructs and validates a new node), even for a plain `CSTVisitor` that changes nothing:
on a 2,000-line module that is ~350 ms per walk, and the rules walk a module many times.
`walk(node, visitor)` calls the same `visit_<Type>` / `leave_<Type>` methods (or the
visitor's own `on_visit`/`on_leave`) in the same order, without rebuilding anything.

The child order of each node type is read once from libcst's own
`_visit_and_replace_children` (the field names it passes to `visit_required`,
`visit_sequence`, ...), so it matches `node.children` exactly; a test checks that on
real files. Transformers still use `node.visit`.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterable, Iterator
from operator import attrgetter

import libcst as cst

from jaxfix.analysis import cstparse  # noqa: F401 - node classes hash and type-test in C (`cstparse._fast_node_classes`)


class _NodeTypes(dict):
    """type -> whether it is a CSTNode; `isinstance` against libcst's ABCs is the slow part of a walk."""

    def __missing__(self, value_type: type) -> bool:
        self[value_type] = is_node = issubclass(value_type, cst.CSTNode)
        return is_node


_IS_NODE = _NodeTypes()


def _token_types() -> frozenset[type]:
    """libcst's whitespace, comment, newline, operator and bracket nodes: more than half the nodes
    of a module, and their children are only more of them (a test checks that on real files)."""
    import libcst._nodes.op as op
    import libcst._nodes.whitespace as whitespace

    found = {
        value
        for module in (op, whitespace)
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, cst.CSTNode)
        and value.__module__ == module.__name__
        and not inspect.isabstract(value)
    }
    brackets = (
        "LeftParen",
        "RightParen",
        "LeftSquareBracket",
        "RightSquareBracket",
        "LeftCurlyBrace",
        "RightCurlyBrace",
    )
    return frozenset(found | {getattr(cst, name) for name in brackets})


TOKEN_TYPES = _token_types()
# Nodes that are not tokens but whose children can only be tokens (their parentheses, a trailing
# semicolon or comma, the space after `async`): a walk that skips tokens has nothing to enter
# below them (`_GET_ABOVE_TOKENS`; a test checks the list against libcst's field annotations).
# They are two fifths of the nodes such a walk enters (10,228 of 26,160 in the 5k-line generated
# file of `benchmarks/large_file.py`, 9,059 of them `Name`s); reading their empty parenthesis
# tuples was 1.7% of the instructions of a check of that file.
TOKENS_BELOW_ONLY = frozenset(
    {
        cst.Name,
        cst.Integer,
        cst.Float,
        cst.Imaginary,
        cst.SimpleString,
        cst.Ellipsis,
        cst.Pass,
        cst.Break,
        cst.Continue,
        cst.ParamStar,
        cst.Asynchronous,
    }
)
_TOKEN_HANDLERS = frozenset(prefix + token.__name__ for token in TOKEN_TYPES for prefix in ("visit_", "leave_"))


class _StatementTypes(dict):
    def __missing__(self, node_type: type) -> bool:
        self[node_type] = found = issubclass(node_type, (cst.BaseStatement, cst.BaseSmallStatement))
        return found


_IS_STATEMENT = _StatementTypes()


def is_statement(node: cst.CSTNode) -> bool:
    """`isinstance(node, (BaseStatement, BaseSmallStatement))`, cached per type (hot in walks)."""
    return _IS_STATEMENT[type(node)]


_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(node_type: type) -> tuple[str, ...]:
    """The names of `node_type`'s child fields, in the order libcst visits them."""
    fields = _FIELDS.get(node_type)
    if fields is None:
        source = textwrap.dedent(inspect.getsource(node_type._visit_and_replace_children))
        calls = [
            call
            for call in ast.walk(ast.parse(source))
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id.startswith("visit_")
            and len(call.args) >= 2
            and isinstance(call.args[1], ast.Constant)
            and isinstance(call.args[1].value, str)
        ]
        calls.sort(key=lambda call: (call.lineno, call.col_offset))
        fields = tuple(dict.fromkeys(call.args[1].value for call in calls))
        _FIELDS[node_type] = fields
    return fields


def _no_fields(node: cst.CSTNode) -> tuple:
    return ()


class _Getters(dict):
    """type -> a function from a node to the values of its child fields, in `child_fields`
    order: one `attrgetter` call per node where a `getattr` per field cost a call each."""

    def __missing__(self, node_type: type):
        fields = child_fields(node_type)
        if not fields:
            get = _no_fields
        elif len(fields) == 1:
            one = attrgetter(fields[0])

            def get(node, _one=one):
                return (_one(node),)

        else:
            get = attrgetter(*fields)
        self[node_type] = get
        return get


_GET = _Getters()


class _GettersAboveTokens(dict):
    """`_GET` for a walk that enters no token: no child fields for the types of
    `TOKENS_BELOW_ONLY`, whose children are all tokens."""

    def __missing__(self, node_type: type):
        self[node_type] = get = _no_fields if node_type in TOKENS_BELOW_ONLY else _GET[node_type]
        return get


_GET_ABOVE_TOKENS = _GettersAboveTokens()


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The same nodes as `node.children`, without rebuilding `node`."""
    for value in _GET[type(node)](node):
        if _IS_NODE[type(value)]:
            yield value
        elif type(value) is tuple or type(value) is list:
            for item in value:
                if _IS_NODE[type(item)]:
                    yield item


def _handler(visitor_type: type, method: str):
    """`visitor_type`'s method `method`, or None where it is libcst's default (which does nothing
    and lets the walk go on: a call per node saved)."""
    found = getattr(visitor_type, method, None)
    if found is not None and found is getattr(cst.CSTVisitor, method, None):
        return None
    return found


class _Descend(dict):
    """value type -> whether a walk enters a value of that type: a node that is not a token (or
    any node, for a visitor with a handler for some token type)."""

    def __init__(self, skip_tokens: bool) -> None:
        super().__init__()
        self.skip_tokens = skip_tokens

    def __missing__(self, value_type: type) -> bool:
        self[value_type] = enter = _IS_NODE[value_type] and not (self.skip_tokens and value_type in TOKEN_TYPES)
        return enter


NOT_TOKEN = _Descend(skip_tokens=True)  # value type -> a node that is not a token


class _Plans(dict):
    """node type -> (its `visit_` handler, its `leave_` handler, its child getter) for one
    visitor type (`walk` looks one up per node). `descend`: a visitor with no handler for a token
    type is not walked into tokens, which hold only tokens: the same calls, half the nodes."""

    def __init__(self, visitor_type: type) -> None:
        super().__init__()
        self.visitor_type = visitor_type
        # a handler defined outside libcst (whose own are the do-nothing defaults); read from the
        # classes' own names: a visitor class defined per call pays this per call
        handles_tokens = any(
            not _TOKEN_HANDLERS.isdisjoint(vars(klass))
            for klass in visitor_type.__mro__
            if not klass.__module__.startswith("libcst")
        )
        self.descend = _Descend(skip_tokens=not handles_tokens)

    def __missing__(self, node_type: type) -> tuple:
        name = node_type.__name__
        self[node_type] = plan = (
            _handler(self.visitor_type, "visit_" + name),
            _handler(self.visitor_type, "leave_" + name),
            (_GET_ABOVE_TOKENS if self.descend.skip_tokens else _GET)[node_type],
        )
        return plan


class _PlansByVisitor(dict):
    """visitor type -> its `_Plans`, for the classes defined at module level. A class defined in a
    function is a new class on every call, and its handlers close over that call's locals (the
    rule's context, the file's trees): kept here, every such class of every file checked stayed
    reachable until the process ended (3 libcst modules, 180,000 objects, alive through the first
    collection of a corpus check; in the language server, every document's trees, for good). Its
    plans are kept on the class itself, and go with it."""

    def __missing__(self, visitor_type: type) -> _Plans:
        if "<locals>" in visitor_type.__qualname__:
            plans = vars(visitor_type).get(_OWN_PLANS)
            if plans is None:
                plans = _Plans(visitor_type)
                setattr(visitor_type, _OWN_PLANS, plans)
            return plans
        self[visitor_type] = plans = _Plans(visitor_type)
        return plans


_OWN_PLANS = "_jaxfix_walk_plans"  # where a class defined in a function keeps its `_Plans`


_PLANS = _PlansByVisitor()


def _plan(visitor_type: type, node_type: type) -> tuple:
    return _PLANS[visitor_type][node_type]


class Visitor(cst.CSTVisitor):
    """A `CSTVisitor` whose own dispatch is cached: subclasses that override `on_visit` /
    `on_leave` and call `super()` pay a dict lookup per node instead of libcst's
    f-string + getattr."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        enter = _plan(type(self), type(node))[0]
        return enter is None or enter(self, node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        leave = _plan(type(self), type(original_node))[1]
        if leave is not None:
            leave(self, original_node)


# Visitors whose traversal can skip on_visit/on_leave and dispatch from the cached plan.
_DISPATCHING_ON_VISIT = (cst.CSTVisitor.on_visit, Visitor.on_visit)
_DISPATCHING_ON_LEAVE = (cst.CSTVisitor.on_leave, Visitor.on_leave)


def _statement_type_names() -> set[str]:
    found: set[str] = set()
    todo: list[type] = [cst.BaseStatement, cst.BaseSmallStatement]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.add(sub.__name__)
            todo.append(sub)
    return found


def statement_hooks(cls: type) -> type:
    """Class decorator for a `Visitor` that defines `enter_statement(node)` and
    `leave_statement(node)`: they are called for every statement, before its `visit_` method and
    after its `leave_` method, as an `on_visit`/`on_leave` override testing `is_statement` would
    call them, while `walk` keeps dispatching per type (an override pays two calls per node)."""
    for name in _statement_type_names():
        enter = _handler(cls, "visit_" + name)
        leave = _handler(cls, "leave_" + name)

        def visit(self, node, _enter=enter):
            self.enter_statement(node)
            return None if _enter is None else _enter(self, node)

        def depart(self, node, _leave=leave):
            if _leave is not None:
                _leave(self, node)
            self.leave_statement(node)

        setattr(cls, "visit_" + name, visit)
        setattr(cls, "leave_" + name, depart)
    return cls


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """Visit `node` and its descendants with `visitor`, as `node.visit(visitor)` would.

    A visitor with its own `on_visit`/`on_leave` sees every node, tokens too, unless its class
    sets `tokens_unseen = True`: it declares that its `on_visit` and `on_leave` do nothing with a
    token (and its `visit_`/`leave_` handlers handle none), so the walk leaves the tokens out, more
    than half the nodes, as it does for a visitor dispatching per type."""
    visitor_type = type(visitor)
    if visitor_type.on_leave not in _DISPATCHING_ON_LEAVE:
        if getattr(visitor_type, "tokens_unseen", False):
            _walk_custom(node, visitor, NOT_TOKEN, _GET_ABOVE_TOKENS)
        else:
            _walk_custom(node, visitor, _IS_NODE, _GET)
    elif visitor_type.on_visit not in _DISPATCHING_ON_VISIT:
        # its own `on_visit`, libcst's `on_leave`: the `leave_` handlers from the cached plan (libcst's
        # `on_leave` builds the method's name and looks it up, per node)
        plans = _PLANS[visitor_type]
        if getattr(visitor_type, "tokens_unseen", False):
            _walk_custom_visit(node, visitor, plans, NOT_TOKEN, _GET_ABOVE_TOKENS)
        else:
            _walk_custom_visit(node, visitor, plans, _IS_NODE, _GET)
    else:
        plans = _PLANS[visitor_type]
        _walk_dispatch(node, visitor, plans, plans.descend)


def _walk_dispatch(node: cst.CSTNode, visitor: cst.CSTVisitor, plans: _Plans, descend: _Descend) -> None:
    enter, leave, get = plans[type(node)]
    if enter is None or enter(visitor, node) is not False:
        for value in get(node):
            if descend[type(value)]:
                _walk_dispatch(value, visitor, plans, descend)
            elif type(value) is tuple or type(value) is list:
                for item in value:
                    if descend[type(item)]:
                        _walk_dispatch(item, visitor, plans, descend)
    if leave is not None:
        leave(visitor, node)


def _walk_custom(node: cst.CSTNode, visitor: cst.CSTVisitor, descend: dict, get: dict) -> None:
    if visitor.on_visit(node):
        for value in get[type(node)](node):
            if descend[type(value)]:
                _walk_custom(value, visitor, descend, get)
            elif type(value) is tuple or type(value) is list:
                for item in value:
                    if descend[type(item)]:
                        _walk_custom(item, visitor, descend, get)
    visitor.on_leave(node)


def _walk_custom_visit(node: cst.CSTNode, visitor: cst.CSTVisitor, plans: _Plans, descend: dict, get: dict) -> None:
    if visitor.on_visit(node):
        for value in get[type(node)](node):
            if descend[type(value)]:
                _walk_custom_visit(value, visitor, plans, descend, get)
            elif type(value) is tuple or type(value) is list:
                for item in value:
                    if descend[type(item)]:
                        _walk_custom_visit(item, visitor, plans, descend, get)
    leave = plans[type(node)][1]
    if leave is not None:
        leave(visitor, node)


def parent_map(root: cst.CSTNode) -> dict[cst.CSTNode, cst.CSTNode]:
    """Every node under `root` mapped to its parent (what `ParentNodeProvider` gives)."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    stack = [root]
    pop, push, get = stack.pop, stack.append, _GET
    while stack:
        node = pop()
        for value in get[type(node)](node):
            if _IS_NODE[type(value)]:
                parents[value] = node
                push(value)
            elif type(value) is tuple or type(value) is list:
                for item in value:
                    if _IS_NODE[type(item)]:
                        parents[item] = node
                        push(item)
    return parents


class TreeIndex:
    """One pass over a tree: every node's parent (`parents`, what `parent_map` gives) and every
    node in source order, from which `of_type` answers "the calls of the module" without a walk.
    A rule's whole-module walk for one or two node types cost as much as this pass each (five of
    them were a tenth of `check` on a 50,000-line file, issue #33 item 1).

    `of_type(T)` lists the nodes `walk(root, visitor)` would hand to `visitor.visit_T`, in the
    same order (the walk's pre-order), for a visitor that prunes nothing."""

    __slots__ = ("root", "parents", "_order", "_of_type")

    def __init__(self, root: cst.CSTNode) -> None:
        parents: dict[cst.CSTNode, cst.CSTNode] = {}
        order: list[cst.CSTNode] = []
        stack = [root]
        pop, add, get, is_node = stack.pop, order.append, _GET, _IS_NODE
        while stack:
            node = pop()
            add(node)
            fields = get[type(node)]
            if fields is _no_fields:  # a whitespace or operator token: a third of the nodes, no children
                continue
            below = []
            for value in fields(node):
                if is_node[type(value)]:
                    parents[value] = node
                    below.append(value)
                elif type(value) is tuple or type(value) is list:
                    for item in value:
                        if is_node[type(item)]:
                            parents[item] = node
                            below.append(item)
            if below:
                below.reverse()
                stack += below
        self.root = root
        self.parents = parents
        self._order = order
        self._of_type: dict[tuple[type, ...], list[cst.CSTNode]] = {}

    def of_type(self, *node_types: type) -> list[cst.CSTNode]:
        """The nodes of exactly these types (not subclasses: libcst's node classes are concrete
        leaves), in source order; the list is shared, not to be changed."""
        found = self._of_type.get(node_types)
        if found is None:
            if any(kind.__subclasses__() for kind in node_types):
                raise TypeError(f"not a concrete node type: {node_types}")
            if len(node_types) == 1:
                only = node_types[0]
                found = [node for node in self._order if type(node) is only]
            else:
                wanted = frozenset(node_types)
                found = [node for node in self._order if type(node) in wanted]
            self._of_type[node_types] = found
        return found


def names_under(nodes: Iterable, seen: set[int]) -> set[str]:
    """Identifiers spelled in `nodes`, but under the nodes in `seen` (ids), which gets the ids of
    the nodes walked. (The child fields are read as `children` reads them, not with libcst's
    `.children`, which rebuilds each node it is asked about: on a class rewritten whole that cost
    more than the rest of the fix; and inline, without a generator per node: a quarter less. Tokens,
    which hold no name, are not entered.)"""
    found: set[str] = set()
    get, is_node, name_type = _GET_ABOVE_TOKENS, NOT_TOKEN, cst.Name
    for node in nodes:
        parts = node.nodes if isinstance(node, cst.FlattenSentinel) else [node]
        stack = [part for part in parts if isinstance(part, cst.CSTNode)]
        pop, push = stack.pop, stack.append
        while stack:
            item = pop()
            if id(item) in seen:
                continue
            seen.add(id(item))
            if type(item) is name_type:
                found.add(item.value)
            for value in get[type(item)](item):
                if is_node[type(value)]:
                    push(value)
                elif type(value) is tuple or type(value) is list:
                    for part in value:
                        if is_node[type(part)]:
                            push(part)
    return found


def of_type_under(root: cst.CSTNode, node_type: type) -> list[cst.CSTNode]:
    """The nodes of exactly `node_type` in `root`'s subtree (`root` included), in source order,
    without entering tokens: what `TreeIndex.of_type` lists, for one function instead of the
    module (a question about a function asked of every node of the module was quadratic in a
    module of many such functions)."""
    found: list[cst.CSTNode] = []
    get, is_node = _GET_ABOVE_TOKENS, NOT_TOKEN
    stack = [root]
    pop = stack.pop
    while stack:
        item = pop()
        if type(item) is node_type:
            found.append(item)
        below = []
        for value in get[type(item)](item):
            if is_node[type(value)]:
                below.append(value)
            elif type(value) is tuple or type(value) is list:
                for part in value:
                    if is_node[type(part)]:
                        below.append(part)
        below.reverse()
        stack += below
    return found


# What holds nested statements: suites and the clauses of compound statements.
_STATEMENT_HOLDERS = (
    cst.BaseSuite,
    cst.Else,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.Finally,
    cst.If,
    cst.MatchCase,
)


class _StatementKinds(dict):
    """node type -> 1 for a statement (compound, simple line, small), 2 for what holds statements
    (`_STATEMENT_HOLDERS`), 0 otherwise; `isinstance` against libcst's ABCs is the slow part."""

    def __missing__(self, node_type: type) -> int:
        if issubclass(node_type, (cst.BaseCompoundStatement, cst.SimpleStatementLine, cst.BaseSmallStatement)):
            kind = 1
        else:
            kind = 2 if issubclass(node_type, _STATEMENT_HOLDERS) else 0
        self[node_type] = kind
        return kind


_STATEMENT_KIND = _StatementKinds()


def statements(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every statement under `root` (compound, simple lines and their small statements), in
    source order, without entering expressions: finding classes or `global`s this way costs a
    fraction of a full walk. Iterative: a nested generator per level cost a yield per level per
    statement."""
    kind_of = _STATEMENT_KIND
    stack = list(children(root))
    stack.reverse()
    pop = stack.pop
    while stack:
        node = pop()
        kind = kind_of[type(node)]
        if kind:
            if kind == 1:
                yield node
            below = list(children(node))
            below.reverse()
            stack += below


class _Returns(cst.CSTVisitor):
    """The `return` statements of `func` itself (one class: a class built per call cost its
    creation and a fresh dispatch table per call)."""

    def __init__(self, func: cst.FunctionDef) -> None:
        super().__init__()
        self.func = func
        self.returns: list[cst.Return] = []

    def visit_Return(self, node: cst.Return) -> None:
        self.returns.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.func

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def own_returns(func: cst.FunctionDef) -> list[cst.Return]:
    """The `return` statements of `func` itself, in source order: not those of the functions,
    lambdas and classes nested in it."""
    found = _Returns(func)
    walk(func, found)
    return found.returns


def returned_name(func: cst.FunctionDef) -> str | None:
    """The one name every `return` of `func` itself gives (`def make_step(lr): def step(x): ...;
    return step`), or None: no `return`, a return of anything but a name, or of two names."""
    returns = own_returns(func)
    names = {r.value.value if isinstance(r.value, cst.Name) else None for r in returns}
    return names.pop() if len(names) == 1 else None
