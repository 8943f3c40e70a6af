"""Syntactic facts about blocks of statements: which names they bind, read, or stop a move on.

Which names a block assigns (in order) or reads, which names a function's body binds anywhere
(`assigned_names`: its locals, for the traced-value walk and the timing rules), which constructs
stop a block from becoming a `lax.cond` branch or a loop body (`break`, `return`, side effects),
and what kind of number literal an expression is. Pure libcst syntax: no scopes, no traced-value
analysis.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.walk import Visitor, walk


def strip_parens(e: cst.BaseExpression) -> cst.BaseExpression:
    """`e` without its own parentheses (for splicing into a call or another expression)."""
    if getattr(e, "lpar", None):
        return e.with_changes(lpar=[], rpar=[])
    return e


def block_statements(block) -> list[cst.BaseStatement]:
    """The statements of a block; a one-line suite (`if c: a = 1; b = 2`) becomes one statement line."""
    if isinstance(block, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=list(block.body))]
    return list(block.body)


def number_literal(e) -> str | None:
    """"int", "float" or "bool" for a (signed) Python number literal, else None."""
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, (cst.Minus, cst.Plus)):
        return number_literal(e.expression)
    if isinstance(e, cst.Integer):
        return "int"
    if isinstance(e, cst.Float):
        return "float"
    if isinstance(e, cst.Name) and e.value in ("True", "False"):
        return "bool"
    return None


def statement_kinds(n: cst.CSTNode, loop: bool = False) -> set[str]:
    """Constructs in `n`'s body that block moving it into a function (not descending into defs)."""
    kinds: set[str] = set()

    body = n.body
    walk(body, _StatementKinds(n, loop, kinds))
    if isinstance(n, cst.If):
        orelse = n.orelse
        while orelse is not None:
            walk(orelse.body, _StatementKinds(n, loop, kinds))
            orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    return kinds


class _StatementKinds(Visitor):
    """The visitor of `statement_kinds` (defined once: a class made per call costs every later
    `isinstance` against libcst's visitor ABCs a walk over all of them, issue #33)."""

    def __init__(self, n: cst.CSTNode, loop: bool, kinds: set[str]) -> None:
        super().__init__()
        self.n, self.loop, self.kinds, self.loops = n, loop, kinds, 0

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    # loops as `visit_`/`leave_` handlers, not an `on_visit` override: the walk then dispatches per
    # type from its cached plan and skips the tokens
    def visit_For(self, node) -> None:
        if node is not self.n:
            self.loops += 1  # `break`/`continue` inside a nested loop leave only that loop

    visit_While = visit_For

    def leave_For(self, node) -> None:
        if node is not self.n:
            self.loops -= 1

    leave_While = leave_For

    def visit_Break(self, node) -> None:
        if not self.loops:
            self.kinds.add("break")

    def visit_Continue(self, node) -> None:
        if not self.loops:
            self.kinds.add("continue")

    def visit_Return(self, node) -> None:
        if self.loop:
            self.kinds.add("return")

    def visit_Raise(self, node) -> None:
        self.kinds.add("raise")

    def visit_Yield(self, node) -> None:
        self.kinds.add("yield")

    def visit_Global(self, node) -> None:
        self.kinds.add("global")

    def visit_Nonlocal(self, node) -> None:
        self.kinds.add("global")

    def visit_Del(self, node) -> None:
        self.kinds.add("del")

    def visit_Expr(self, node: cst.Expr) -> None:
        if not isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
            self.kinds.add("side-effect")

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if _has_subscript_or_attr(node.target):
            self.kinds.add("side-effect")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _has_subscript_or_attr(node.target):
            self.kinds.add("side-effect")


def _has_subscript_or_attr(t) -> bool:
    if isinstance(t, (cst.Subscript, cst.Attribute)):
        return True
    if isinstance(t, (cst.Tuple, cst.List)):
        return any(_has_subscript_or_attr(el.value) for el in t.elements)
    if isinstance(t, cst.StarredElement):
        return _has_subscript_or_attr(t.value)
    return False


def ordered_assigned(stmts) -> list[str]:
    """Names the statements bind (assignments, loop targets, walrus, nested defs), first binding first."""
    out: list[str] = []
    for s in stmts:
        walk(s, _Assigned(out))
    return out


class _Assigned(cst.CSTVisitor):
    """The visitor of `ordered_assigned`, appending to `out` (one class, not one per call)."""

    def __init__(self, out: list[str]) -> None:
        super().__init__()
        self.out = out

    def visit_FunctionDef(self, node) -> bool:
        if node.name.value not in self.out:
            self.out.append(node.name.value)
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def _add(self, target) -> None:
        for name in target_names(target):
            if name not in self.out:
                self.out.append(name)

    def visit_AssignTarget(self, node) -> None:
        self._add(node.target)

    def visit_AugAssign(self, node) -> None:
        self._add(node.target)

    def visit_AnnAssign(self, node) -> None:
        if node.value is not None:
            self._add(node.target)

    def visit_For(self, node) -> None:
        self._add(node.target)

    def visit_NamedExpr(self, node) -> None:
        self._add(node.target)


def assigned_names_in(stmts) -> set[str]:
    """The set of `ordered_assigned(stmts)`."""
    return set(ordered_assigned(stmts))


def assigned_names_in_small(s) -> set[str]:
    """Names one small statement (`a = ...`, `a += ...`, `a: T = ...`) binds."""
    if isinstance(s, cst.Assign):
        out = set()
        for t in s.targets:
            out |= assigned_names_in_target(t.target)
        return out
    if isinstance(s, (cst.AugAssign, cst.AnnAssign)):
        return assigned_names_in_target(s.target)
    if isinstance(s, (cst.Import, cst.ImportFrom)):
        return set()
    return set()


def assigned_names_in_target(t) -> set[str]:
    """Plain names an assignment target binds (not attributes or subscripts)."""
    return set(target_names(t))


def target_names(t) -> list[str]:
    """`assigned_names_in_target` in source order: `key, ra, rb = ...` gives key, ra, rb (a loop's
    carry is written in this order, the same in every process whatever PYTHONHASHSEED)."""
    if isinstance(t, cst.Name):
        return [t.value]
    if isinstance(t, (cst.Tuple, cst.List)):
        return [name for el in t.elements for name in target_names(el.value)]
    if isinstance(t, cst.StarredElement):
        return target_names(t.value)
    return []


def assigned_names(node: cst.CSTNode) -> set[str]:
    """Every local name bound anywhere in a function's body (statements only, not nested scopes;
    walrus targets inside expressions are not seen)."""
    found: set[str] = set()
    if isinstance(node, cst.Lambda):
        return found
    body = node.body if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else node
    _bound_in_block(body, found)
    return found


def _bound_in_block(block, found: set[str]) -> None:
    if block is None:
        return
    if type(block) is cst.IndentedBlock or type(block) is cst.SimpleStatementSuite:
        stmts = block.body
    elif isinstance(block, (list, tuple)):
        stmts = block
    else:
        stmts = [block]
    for s in stmts:
        # `type(s) is`: libcst's statement classes are concrete, and `isinstance` against them runs
        # ABCMeta's check, a dozen per statement down this chain
        kind = type(s)
        if kind is cst.SimpleStatementLine:
            _bound_in_block(list(s.body), found)
        elif kind is cst.Assign:
            for t in s.targets:
                found.update(target_names(t.target))
        elif kind is cst.AugAssign or kind is cst.AnnAssign:
            if kind is not cst.AnnAssign or s.value is not None:
                found.update(target_names(s.target))
        elif kind is cst.Import or kind is cst.ImportFrom:
            if isinstance(s.names, cst.ImportStar):
                continue
            for alias in s.names:
                if alias.asname is not None:
                    found.update(target_names(alias.asname.name))
                else:
                    top = alias.name
                    while isinstance(top, cst.Attribute):
                        top = top.value
                    if isinstance(top, cst.Name):
                        found.add(top.value)
        elif kind is cst.FunctionDef or kind is cst.ClassDef:
            found.add(s.name.value)
        elif kind is cst.If:
            _bound_in_block(s.body, found)
            _bound_in_block(s.orelse, found)
        elif kind is cst.Else:
            _bound_in_block(s.body, found)
        elif kind is cst.For or kind is cst.While:
            if kind is cst.For:
                found.update(target_names(s.target))
            _bound_in_block(s.body, found)
            if s.orelse is not None:
                _bound_in_block(s.orelse.body, found)
        elif kind is cst.With:
            for item in s.items:
                if item.asname is not None:
                    found.update(target_names(item.asname.name))
            _bound_in_block(s.body, found)
        elif kind is cst.Try or kind.__name__ == "TryStar":
            _bound_in_block(s.body, found)
            for h in s.handlers:
                if h.name is not None:
                    found.update(target_names(h.name.name))
                _bound_in_block(h.body, found)
            if s.orelse is not None:
                _bound_in_block(s.orelse.body, found)
            if s.finalbody is not None:
                _bound_in_block(s.finalbody.body, found)
        elif kind is cst.Match:
            for case in s.cases:
                _bound_in_block(case.body, found)


def names_read(node) -> set[str]:
    """Every name spelled in `node` (reads and writes alike: a superset of what it reads)."""
    if node is None:
        return set()
    out: set[str] = set()
    walk(node, _NamesSpelled(out))
    return out


class _NamesSpelled(cst.CSTVisitor):
    def __init__(self, out: set[str]) -> None:
        super().__init__()
        self.out = out

    def visit_Name(self, n: cst.Name) -> None:
        self.out.add(n.value)


def mapping_names(node, key_methods: frozenset[str]) -> frozenset[str]:
    """Names `node` calls a mapping-only method on (`pytree_flat.keys()`, `d.items()`: no array
    has one) and binds at most once: they hold a mapping, whose iteration yields its keys, Python
    values even when its leaves are traced (google-deepmind octo `_verify_shapes`:
    `{k: f"{flat[k].shape}" for k in flat}` beside `set(flat.keys())`)."""
    called: set[str] = set()
    bound: dict[str, int] = {}

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            f = n.func
            if isinstance(f, cst.Attribute) and f.attr.value in key_methods and isinstance(f.value, cst.Name):
                called.add(f.value.value)

        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            for name in target_names(n.target):
                bound[name] = bound.get(name, 0) + 1

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            for name in target_names(n.target):
                bound[name] = bound.get(name, 0) + 2

        def visit_For(self, n: cst.For) -> None:
            for name in target_names(n.target):
                bound[name] = bound.get(name, 0) + 2

    walk(node, V())
    return frozenset(name for name in called if bound.get(name, 0) <= 1)
