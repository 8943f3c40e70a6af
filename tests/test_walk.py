"""The fast read-only walk must visit exactly what libcst's own `visit` visits, in order."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Sequence
from pathlib import Path

import libcst as cst
import pytest
from libcst import MaybeSentinel
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from jaxfix.analysis.walk import (
    TOKEN_TYPES,
    TOKENS_BELOW_ONLY,
    TreeIndex,
    child_fields,
    children,
    of_type_under,
    parent_map,
    statements,
    walk,
)

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [
    ROOT / "jaxfix" / "analysis" / "jit_contexts.py",
    ROOT / "codemods" / "traced_control_flow" / "traced_if.py",
    *sorted((ROOT / "fixtures" / "traced_control_flow").glob("*.in.py"))[:6],
]
ODD_SYNTAX = """\
async def f(a, /, b=1, *args, c: int = 2, **kw) -> None:
    async with x as (y, z), w:
        async for i in range(3):
            yield [j async for j in g() if j]
    match a:
        case {"k": [1, *rest]} | Point(x=0) if rest:
            pass
        case _:
            print(f"{a!r:>{b}} {{}}", *args, sep="")
    lambda *, q=1: q
    global g; del kw[0]
    try:
        raise ValueError from None
    except* (TypeError, ValueError) as e:
        x @= y ** -z
    finally:
        return (yield from b)
@dec(1)
class C(Base, metaclass=M):
    x: "int" = ...
    def m[T](self): ...
"""


def _events(node: cst.CSTNode, use_walk: bool) -> list[tuple[str, int]]:
    seen: list[tuple[str, int]] = []

    class Recorder(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            seen.append(("enter", id(n)))
            return not isinstance(n, cst.Lambda)  # pruning must be honoured too

        def on_leave(self, n: cst.CSTNode) -> None:
            seen.append(("leave", id(n)))

    if use_walk:
        walk(node, Recorder())
    else:
        node.visit(Recorder())
    return seen


def _modules():
    yield "odd-syntax", cst.parse_module(ODD_SYNTAX)
    for path in SOURCES:
        yield path.name, cst.parse_module(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name,module", list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_walk_matches_libcst_visit_order_and_pruning(name, module):
    assert _events(module, use_walk=True) == _events(module, use_walk=False)


@pytest.mark.parametrize("name,module", list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_walk_of_a_visitor_with_its_own_on_visit_calls_its_leave_methods_as_libcst_does(name, module):
    def events(use_walk: bool) -> list[tuple[str, int]]:
        seen: list[tuple[str, int]] = []

        class OwnVisit(cst.CSTVisitor):  # its own `on_visit`, libcst's `on_leave`
            def on_visit(self, n: cst.CSTNode) -> bool:
                seen.append(("enter", id(n)))
                return not isinstance(n, cst.Lambda)

            def leave_Name(self, n: cst.Name) -> None:
                seen.append(("leave", id(n)))

            def leave_FunctionDef(self, n: cst.FunctionDef) -> None:
                seen.append(("leave", id(n)))

        if use_walk:
            walk(module, OwnVisit())
        else:
            module.visit(OwnVisit())
        return seen

    found = events(use_walk=True)
    assert ("leave", id(next(iter(TreeIndex(module).of_type(cst.Name))))) in found
    assert found == events(use_walk=False)


@pytest.mark.parametrize("name,module", list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("own_leave", [True, False])
def test_a_visitor_that_leaves_tokens_unseen_gets_the_other_nodes_as_libcst_hands_them(name, module, own_leave):
    """`tokens_unseen = True`: the walk leaves the tokens out of an own `on_visit` (and `on_leave`);
    every other node comes in libcst's order, with its pruning."""

    tokens: list[cst.CSTNode] = []

    def events(use_walk: bool) -> list[tuple[str, int]]:
        seen: list[tuple[str, int]] = []

        class Visit(cst.CSTVisitor):
            tokens_unseen = True

            def on_visit(self, n: cst.CSTNode) -> bool:
                if type(n) not in TOKEN_TYPES:
                    seen.append(("enter", id(n)))
                elif use_walk:
                    tokens.append(n)
                return not isinstance(n, cst.Lambda)

            def leave_Name(self, n: cst.Name) -> None:
                seen.append(("leave", id(n)))

        class VisitAndLeave(Visit):
            def on_leave(self, n: cst.CSTNode) -> None:
                if type(n) not in TOKEN_TYPES:
                    seen.append(("leave", id(n)))

        visitor = VisitAndLeave() if own_leave else Visit()
        if use_walk:
            walk(module, visitor)
        else:
            module.visit(visitor)
        return seen

    found = events(use_walk=True)
    assert len(found) > 50 and not tokens
    assert found == events(use_walk=False)


def test_children_match_libcst_children_for_every_node():
    module = cst.parse_module(ODD_SYNTAX)
    stack = [module]
    checked = 0
    while stack:
        node = stack.pop()
        assert [id(c) for c in children(node)] == [id(c) for c in node.children], type(node).__name__
        stack.extend(node.children)
        checked += 1
    assert checked > 300


def test_dispatching_visitor_gets_visit_and_leave_methods_and_can_prune():
    module = cst.parse_module("def f(x):\n    return g(h(x))\ng(1)\n")
    calls, leaves = [], []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> bool:
            calls.append(cst.Module([]).code_for_node(node.func))
            return False  # do not enter arguments: h(x) is never seen

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            leaves.append(node.name.value)

    walk(module, Calls())
    assert calls == ["g", "g"]
    assert leaves == ["f"]


def test_a_visitor_class_made_per_call_and_what_its_handlers_hold_are_not_kept_by_the_walk():
    """The walk's per-class plans of a class defined in a function must not outlive the class: kept
    in the module-level table, every such class (and the trees its handlers close over) lived until
    the process ended."""
    import gc
    import weakref

    def names_in(module: cst.Module) -> tuple[list[str], weakref.ref]:
        found: list[str] = []

        class Names(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                found.append(node.value)
                held.append(module)  # a handler closing over the tree, as the rules' visitors do

        held: list = []
        walk(module, Names())
        walk(module, Names())  # the plans the first walk made serve the second (kept on the class)
        return found, weakref.ref(Names)

    found, made = names_in(cst.parse_module("a = b(c)\n"))
    assert found == ["a", "b", "c", "a", "b", "c"]
    gc.collect()
    assert made() is None


def test_parent_map_equals_libcst_parent_provider():
    module = cst.parse_module(ODD_SYNTAX)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider)
    ours = parent_map(module)
    assert len(ours) == len(expected) > 300
    assert all(ours[node] is parent for node, parent in expected.items())


@pytest.mark.parametrize("name,module", list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_tree_index_has_the_parent_map_and_the_nodes_a_walk_visits_in_its_order(name, module):
    index = TreeIndex(module)
    assert index.parents == parent_map(module)
    visited: list[cst.CSTNode] = []

    class CallsAndDefs(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            visited.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            visited.append(node)

    walk(module, CallsAndDefs())
    assert visited
    assert [id(n) for n in index.of_type(cst.Call, cst.FunctionDef)] == [id(n) for n in visited]
    assert [id(n) for n in index.of_type(cst.Call)] == [id(n) for n in visited if type(n) is cst.Call]
    with pytest.raises(TypeError):
        index.of_type(cst.BaseExpression)  # an abstract class: its subclasses' nodes are not listed


@pytest.mark.parametrize("name,module", list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_of_type_under_a_node_lists_what_the_tree_index_lists_below_it(name, module):
    index = TreeIndex(module)

    def below(node: cst.CSTNode, root: cst.CSTNode) -> bool:
        while node is not None and node is not root:
            node = index.parents.get(node)
        return node is root

    roots = [module, *index.of_type(cst.FunctionDef), *index.of_type(cst.Lambda), *index.of_type(cst.Call)[:20]]
    for root in roots:
        for kind in (cst.Name, cst.Call, cst.FunctionDef):
            expected = [id(n) for n in index.of_type(kind) if below(n, root)]
            assert [id(n) for n in of_type_under(root, kind)] == expected


@pytest.mark.parametrize("name,module", list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_statements_yields_every_statement_a_full_walk_finds_in_the_same_order(name, module):
    kinds = (cst.BaseCompoundStatement, cst.SimpleStatementLine, cst.BaseSmallStatement)
    expected: list[cst.CSTNode] = []

    class All(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, kinds):
                expected.append(node)
            return True

    module.visit(All())
    assert [id(n) for n in statements(module)] == [id(n) for n in expected]


@pytest.mark.parametrize("name,module", list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_tokens_hold_only_tokens(name, module):
    """What lets a dispatching walk skip tokens: nothing under one is anything else."""
    stack, tokens = [module], 0
    while stack:
        node = stack.pop()
        if type(node) in TOKEN_TYPES:
            tokens += 1
            assert all(type(c) in TOKEN_TYPES for c in node.children), type(node).__name__
        stack.extend(node.children)
    assert tokens > 20


def _node_classes(hint) -> set:
    """The classes a field annotation names (`object` for anything that is not a class)."""
    origin = typing.get_origin(hint)
    if origin is None:
        return {hint if isinstance(hint, type) else object}
    found = {origin} if isinstance(origin, type) and not issubclass(origin, Sequence) else set()
    for arg in typing.get_args(hint):
        found |= _node_classes(arg)
    return found


def test_tokens_below_only_lists_the_nodes_whose_child_fields_hold_only_tokens():
    """What lets a dispatching walk skip the children of a `Name`: by libcst's own field
    annotations every child field of these types holds tokens only (or nothing, a sentinel)."""
    concrete = set()
    todo = [cst.CSTNode]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if not inspect.isabstract(sub) and getattr(cst, sub.__name__, None) is sub:  # as libcst exports it
                concrete.add(sub)
    for node_type in TOKENS_BELOW_ONLY:
        assert node_type not in TOKEN_TYPES and child_fields(node_type), node_type.__name__
        hints = typing.get_type_hints(node_type)
        for field in child_fields(node_type):
            for held in _node_classes(hints[field]):
                if held is object or not issubclass(held, cst.CSTNode):
                    assert held in (type(None), MaybeSentinel), (node_type.__name__, field, held)
                    continue
                kinds = {held} | {c for c in concrete if issubclass(c, held)}
                assert all(k in TOKEN_TYPES for k in kinds if not inspect.isabstract(k)), (node_type.__name__, field)


def _dispatch_events(module: cst.CSTNode, use_walk: bool, with_token_handler: bool) -> list[tuple[str, str, int]]:
    seen: list[tuple[str, str, int]] = []

    class Dispatch(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            seen.append(("visit", "Name", id(node)))

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            seen.append(("visit", "Lambda", id(node)))
            return False

        def leave_Call(self, node: cst.Call) -> None:
            seen.append(("leave", "Call", id(node)))

    class WithToken(Dispatch):
        def visit_Comma(self, node: cst.Comma) -> None:
            seen.append(("visit", "Comma", id(node)))

        def leave_SimpleWhitespace(self, node: cst.SimpleWhitespace) -> None:
            seen.append(("leave", "SimpleWhitespace", id(node)))

    visitor = WithToken() if with_token_handler else Dispatch()
    if use_walk:
        walk(module, visitor)
    else:
        module.visit(visitor)
    return seen


@pytest.mark.parametrize("with_token_handler", [False, True])
@pytest.mark.parametrize("name,module", list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_dispatching_walk_makes_libcst_calls_with_or_without_token_handlers(name, module, with_token_handler):
    expected = _dispatch_events(module, use_walk=False, with_token_handler=with_token_handler)
    assert _dispatch_events(module, use_walk=True, with_token_handler=with_token_handler) == expected
