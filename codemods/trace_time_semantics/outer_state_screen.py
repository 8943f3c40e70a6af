"""JAX404's fast screen on the stdlib AST: whether a function that may run under a trace could
do what `outer_state_mutation_in_traced_code` reports (a `global`/`nonlocal` write, a store into
or a mutator call on an outer container, a store on a plain object's `self`, a read of a module
name changed at run time), over-approximating the rule's decisions: each helper names the rule's
own that it mirrors. `may_touch_outer_state` is the test per node; the module's state comes from
`outer_state.ModuleState`.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator

from codemods.trace_time_semantics.outer_state import CONSTRUCTION, CONTAINER_CALLS, CONTAINER_MUTATORS, RETURN_NONE
from jaxfix.analysis import astscan
from jaxfix.analysis.screen_function import ScreenFunction, target_names


def may_touch_outer_state(fn: ScreenFunction, n: ast.AST, state, chain=None, tree=None) -> bool:
    """`state()` is the module's `ModuleState`. A container outside the function is the module's
    (a container display or constructor at module level) or, for a nested function, maybe an
    enclosing function's. `chain(fn)`, when given, is a lambda's enclosing functions; `tree`, when
    given, the module (`_inline_in_owner` reads it)."""
    kind = type(n)
    if kind is ast.Global or kind is ast.Nonlocal:
        # the rule reports an assignment to a declared name; a declared name the function binds
        # is also looked up outside it (a container's mutation): neither without a binding here,
        # nor for a `nonlocal` of a function that runs inline in the trace of the name's owner
        stored = [name for name in n.names if name in fn.stored]
        if not stored:
            return False
        return kind is ast.Global or tree is None or not _inline_in_owner(fn, stored, tree)
    if kind is ast.Assign or kind is ast.AugAssign or kind is ast.AnnAssign:
        targets = n.targets if kind is ast.Assign else [n.target]
        if any(type(t) is ast.Attribute or type(t) is ast.Subscript for t in targets):
            own_self = _plain_self(fn)
            if own_self is not None and any(_rooted_at(t, own_self) for t in targets):
                return True  # `self.x = v` / `self.d[k] = v` in a method (the rule: a plain class, a traced `v`)
        names = [t.value.id for t in targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)]
        for t in targets:  # `a.dct[k] = ...` on an object the module built (mirrors the rule)
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute):
                root = t.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id not in fn.locals and root.id in fn.screen.built_from:
                    return True
    elif kind is ast.Call:
        func = n.func
        if isinstance(func, ast.Attribute) and func.attr in RETURN_NONE and id(n) in _used_results(fn):
            return False  # `updates, state = self._opt.update(...)`: no list, dict, set or deque's method
        if (
            isinstance(func, ast.Attribute)
            and func.attr in CONTAINER_MUTATORS
            and isinstance(func.value, (ast.Attribute, ast.Subscript))
        ):
            own_self = _plain_self(fn)
            if own_self is not None and _rooted_at(func.value, own_self):
                return True  # `self.items.append(v)`
        names = (
            [func.value.id]
            if isinstance(func, ast.Attribute) and func.attr in CONTAINER_MUTATORS and isinstance(func.value, ast.Name)
            else []
        )
    elif kind is ast.Name:
        if not isinstance(n.ctx, ast.Load) or n.id in fn.locals:
            return False
        outer = state()
        return n.id in outer.reassigned or (n.id in outer.containers and n.id in outer.changed_by)
    else:
        return False
    return any(name not in fn.locals and _may_be_outer_container(fn, name, state, chain) for name in names)


def _used_results(fn: ScreenFunction) -> frozenset[int]:
    """ids of the values a statement of `fn` assigns or returns (`_result_used`), among the
    statements whose place the rule knows (`traced` records the body and the blocks of `if`,
    loops, `with` and `try`: `_block_statements`; a lambda has none), once per function."""
    found = _USED.get(fn.node)
    if found is None:
        found = frozenset(
            id(stmt.value)
            for stmt in ([] if type(fn.node) is ast.Lambda else _block_statements(fn.node.body))
            if type(stmt) in _RESULT_STATEMENTS and stmt.value is not None
        )
        _USED[fn.node] = found
    return found


_RESULT_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)
_USED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # def node -> `_used_results`


def _inline_in_owner(fn: ScreenFunction, names: list[str], tree: ast.Module) -> bool:
    """Whether the rule's `_same_trace(info, owner)` surely holds for `fn`, a def declaring
    `names` nonlocal, when the rule traces it: the def `owner` it is nested in surely binds them
    (a parameter, or the plain target of an assignment statement of its body: `_block_statements`,
    which the rule's `_locals_of` reads), so the rule's owner is that def; and `fn` has no
    decorator and every `Name` spelling it in the module is in `owner`'s own code, as the function
    of a call or as an argument of a call of a name no import binds (`compute_context(callback)`;
    a transform, a lax body taker or a partial is reached only through an import). Then the rule
    can trace `fn` only as defined inside, or called from, `owner` traced: both reasons are inline,
    and `owner` is in the trace."""
    node = fn.node
    if type(node) is ast.Lambda or node.decorator_list:
        return False
    owner = fn.screen.enclosing(fn)
    if not isinstance(owner, ScreenFunction) or type(owner.node) is ast.Lambda:
        return False
    args = owner.node.args
    surely = {
        a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a is not None
    }
    for stmt in _block_statements(owner.node.body):
        if type(stmt) is ast.Assign:
            surely.update(t.id for t in stmt.targets if type(t) is ast.Name)
        elif type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.value is not None:
            surely.add(stmt.target.id)
    if not all(name in surely for name in names):
        return False
    name, bindings = node.name, fn.screen.names.bindings
    inline: set[int] = set()  # the Names spelling `fn` that `owner`'s own code calls or passes on
    for call in owner.own:
        if type(call) is not ast.Call:
            continue
        func = call.func
        if type(func) is ast.Name and func.id == name:
            inline.add(id(func))
        elif type(func) is ast.Name and func.id not in bindings:
            for arg in (*call.args, *(k.value for k in call.keywords)):
                if type(arg) is ast.Name and arg.id == name:
                    inline.add(id(arg))
    return all(id(other) in inline for other in astscan.nodes(tree) if type(other) is ast.Name and other.id == name)


def _plain_self(fn: ScreenFunction) -> str | None:
    """The rule's `plain_self`, over-approximated: `self` of a method that is no constructor
    (`CONSTRUCTION`), of a class some assignment builds (`h = Cls(...)`, `TraceScreen.built_from`:
    anywhere, where the rule asks for module level); None otherwise."""
    if not (fn.is_method and fn.positional) or fn.name in CONSTRUCTION:
        return None
    built = _BUILT.get(fn.screen)
    if built is None:
        built = _BUILT[fn.screen] = frozenset(c for classes in fn.screen.built_from.values() for c in classes)
    return fn.positional[0] if fn.class_name in built else None


# TraceScreen -> every class name some assignment builds (`_plain_self`), once per screen
_BUILT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _rooted_at(target: ast.AST, name: str) -> bool:
    """`name.x`, `name.x[k]`, `name.x.y` (an attribute or item of `name`, not `name` itself)."""
    if not isinstance(target, (ast.Attribute, ast.Subscript)):
        return False
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
    return isinstance(target, ast.Name) and target.id == name


def _may_be_outer_container(fn: ScreenFunction, name: str, state, chain=None) -> bool:
    """Mirrors the rule's `outer_container`: the first enclosing def binding `name` must bind only
    containers to it (a lambda's: `_lambda_may_see_outer_container` when `chain` is given, else
    yes); without one, a module container."""
    if chain is not None and isinstance(fn.node, ast.Lambda):
        return _lambda_may_see_outer_container(chain(fn), name, state, fn.screen.names.qualify_ast)
    scope = fn.screen.enclosing(fn)
    while scope is not None:
        if scope is True:
            return True
        if name in scope.locals:
            return _binds_only_containers(scope, name)
        scope = scope.screen.enclosing(scope)
    return name in state().containers


def function_parents(tree: ast.Module) -> dict[int, tuple[ast.AST, ...]]:
    """id of each lambda -> the functions it is in, innermost first, as `FuncInfo.parent` links
    them: every def or lambda it is under, in any part of it (a lambda in a default or decorator
    is the def's); class bodies add nothing."""
    found: dict[int, tuple[ast.AST, ...]] = {}
    stack: list[tuple[ast.AST, tuple[ast.AST, ...]]] = [(tree, ())]
    while stack:
        node, outer = stack.pop()
        kind = type(node)
        if kind is ast.Lambda:
            found[id(node)] = outer
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
            outer = (node, *outer)
        stack.extend((child, outer) for child in astscan.children(node))
    return found


def _lambda_may_see_outer_container(chain: tuple[ast.AST, ...], name: str, state, qualify) -> bool:
    """`outer_container` for a lambda (`name` not its own), over its enclosing functions `chain`:
    the first that binds `name` (`_locals_of`: its parameters and the names its statements
    assign) decides, by `_container_local`; with none, a module container. On the stdlib AST a
    function binds `name` surely when it is a parameter or the plain target of an assignment
    statement of its body (`_block_statements`, the blocks `assigned_names` reads), surely not
    when no code in it binds the name at all (`astscan.bound_names`); between: unknown, yes."""
    for scope in chain:
        args = scope.args
        params = {
            a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a is not None
        }
        assigned = type(scope) is not ast.Lambda and any(
            (type(stmt) is ast.Assign and any(type(t) is ast.Name and t.id == name for t in stmt.targets))
            or (
                type(stmt) is ast.AnnAssign
                and type(stmt.target) is ast.Name
                and stmt.target.id == name
                and stmt.value is not None
            )
            for stmt in _block_statements(scope.body)
        )
        if name in params or assigned:
            return _container_local_ast(scope, name, qualify)
        if name in astscan.bound_names(scope):
            return True
    return name in state().containers


_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.TryStar)


def _block_statements(stmts: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a function body and of the `if`/`for`/`while`/`with`/`try` blocks in it
    (`traced._bound_in_block` reads those), not of nested defs, classes or `match` cases."""
    stack = list(stmts)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, _BLOCKS):
            stack.extend(stmt.body)
            stack.extend(getattr(stmt, "orelse", ()))
            stack.extend(getattr(stmt, "finalbody", ()))
            for handler in getattr(stmt, "handlers", ()):
                stack.extend(handler.body)


def _container_local_ast(scope: ast.AST, name: str, qualify) -> bool:
    """`_container_local` on the stdlib AST, for a function found by `function_parents`: its own
    code (nested defs, lambdas and classes left out). A lambda has no assignment statement: no."""
    if type(scope) is ast.Lambda:
        return False
    own: list[ast.AST] = []
    stack: list[ast.AST] = list(scope.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda or kind is ast.ClassDef:
            continue
        own.append(node)
        stack.extend(astscan.children(node))
    return _only_containers(own, name, qualify)


def _binds_only_containers(fn: ScreenFunction, name: str) -> bool:
    """As `_container_local`: every assignment of `name` in the own body is a container display or
    constructor, and there is one."""
    return _only_containers(fn.own, name, fn.screen.names.qualify_ast)


def _only_containers(nodes, name: str, qualify) -> bool:
    """Among `nodes` (a function's own), every assignment of `name` is a container display or
    constructor, and there is one."""
    values: list[ast.AST | None] = []
    for n in nodes:
        if type(n) is ast.Assign:
            for t in n.targets:
                if type(t) is ast.Name and t.id == name:
                    values.append(n.value)
                elif isinstance(t, (ast.Tuple, ast.List, ast.Starred)) and name in target_names(t):
                    values.append(None)
        elif type(n) is ast.AnnAssign and type(n.target) is ast.Name and n.target.id == name:
            values.append(n.value)
    return bool(values) and all(
        v is not None
        and (
            isinstance(v, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp))
            or (isinstance(v, ast.Call) and (qualify(v.func) or "") in CONTAINER_CALLS)
        )
        for v in values
    )
