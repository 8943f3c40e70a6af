"""The statement walk behind `traced.FunctionFacts`: which names are traced before each statement.

The walk is flow-sensitive in statement order: an assignment replaces what a name held (`bind`),
after `if`/`else` a name is traced if either branch made it so, a loop body is walked until the
traced set stops growing and the result is joined with the zero-trip state, and `try` joins every
handler with the body. It records, for every statement, the set of local names traced just before
it (`FunctionFacts.before`); whether an assigned value is traced it asks the facts themselves
(`expr_traced`, `loop_bindings`), so a subclass that decides expressions differently
(`codemods.traced_control_flow.evidence`) walks with its own answers. `traced.analyse_function`
builds the facts and runs this walk.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.body_facts import assigned_names, target_names
from jaxfix.analysis.names import stored_root_name
from jaxfix.analysis.scopes import param_names


class StatementWalker:
    """Runs the ordered walk of one function body and fills a `traced.FunctionFacts` (not imported
    here: that module imports this one)."""

    def __init__(self, facts) -> None:
        self.f = facts

    def run(self) -> None:
        node = self.f.node
        self.f.locals = assigned_names(node) | set(param_names(node.params))
        env = set(self.f.entry_traced)
        self.f.all_traced |= env
        if isinstance(node, cst.Lambda):
            self.f.exit_traced = frozenset(env)
            return
        env = self.block(node.body, env)
        self.f.exit_traced = frozenset(env)

    def record(self, stmt: cst.CSTNode, env: set[str]) -> None:
        prev = self.f.before.get(stmt)
        self.f.before[stmt] = frozenset(env) if prev is None else prev | frozenset(env)
        self.f.all_traced |= env

    def block(self, body, env: set[str]) -> set[str]:
        stmts = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else body
        if isinstance(body, cst.SimpleStatementSuite):
            for small in body.body:
                self.record(small, env)
                env = self.small(small, env)
            return env
        for stmt in stmts:
            env = self.stmt(stmt, env)
        return env

    def stmt(self, s: cst.CSTNode, env: set[str]) -> set[str]:
        self.record(s, env)
        if isinstance(s, cst.SimpleStatementLine):
            for small in s.body:
                self.record(small, env)
                env = self.small(small, env)
            return env
        if isinstance(s, cst.If):
            a = self.block(s.body, set(env))
            b = self.orelse(s.orelse, set(env))
            return a | b
        if isinstance(s, cst.While):
            return self.loop(s, env, bind=None)
        if isinstance(s, cst.For):
            return self.loop(s, env, bind=s)
        if isinstance(s, cst.With):
            env = set(env)
            for item in s.items:
                if item.asname is not None:
                    self.bind(item.asname.name, self.f.expr_traced(item.item, env), env)
            return self.block(s.body, env)
        if isinstance(s, (cst.Try, getattr(cst, "TryStar", cst.Try))):
            out = self.block(s.body, set(env))
            for h in s.handlers:
                out |= self.block(h.body, set(env) | out)
            if s.orelse is not None:
                out |= self.block(s.orelse.body, set(out))
            if s.finalbody is not None:
                out |= self.block(s.finalbody.body, set(out))
            return out | env
        if isinstance(s, (cst.FunctionDef, cst.ClassDef)):
            env = set(env)
            env.discard(s.name.value)
            return env
        return env

    def orelse(self, node, env: set[str]) -> set[str]:
        if node is None:
            return env
        if isinstance(node, cst.If):
            return self.stmt(node, env)
        return self.block(node.body, env)

    def loop(self, s, env: set[str], bind) -> set[str]:
        start = set(env)
        cur = set(env)
        for _ in range(20):
            inner = set(cur)
            if bind is not None:
                for name, traced in self.f.loop_bindings(bind.target, bind.iter, start):
                    if traced:
                        inner.add(name)
                    else:
                        inner.discard(name)
            out = self.block(s.body, inner)
            new = cur | out
            if new == cur:
                break
            cur = new
        # record the loop statement with the fixpoint (its test is evaluated on every trip)
        self.record(s, cur)
        if s.orelse is not None:
            cur = cur | self.block(s.orelse.body, set(cur))
        return cur | start

    def bind(self, target: cst.BaseExpression, traced: bool, env: set[str]) -> None:
        for name in target_names(target):
            if traced:
                env.add(name)
            else:
                env.discard(name)
        if not isinstance(target, (cst.Name, cst.Tuple, cst.List, cst.StarredElement)) and traced:
            base = stored_root_name(target)
            if base is not None:
                env.add(base)

    def small(self, s: cst.BaseSmallStatement, env: set[str]) -> set[str]:
        env = set(env)
        if isinstance(s, cst.Assign):
            traced = self.f.expr_traced(s.value, env)
            for tgt in s.targets:
                self._bind_assign(tgt.target, s.value, traced, env)
        elif isinstance(s, cst.AnnAssign) and s.value is not None:
            self.bind(s.target, self.f.expr_traced(s.value, env), env)
        elif isinstance(s, cst.AugAssign):
            traced = self.f.expr_traced(s.value, env) or self.f.expr_traced(s.target, env)
            self.bind(s.target, traced, env)
        return env

    def _bind_assign(self, target, value, traced: bool, env: set[str]) -> None:
        # `a, b = x.shape`-style: pair tuple targets with tuple values when both are literal tuples
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            if len(target.elements) == len(value.elements) and not any(
                isinstance(el, cst.StarredElement) for el in (*target.elements, *value.elements)
            ):
                snapshot = set(env)
                for t_el, v_el in zip(target.elements, value.elements):
                    self.bind(t_el.value, self.f.expr_traced(v_el.value, snapshot), env)
                return
        # `loss, n = helper(x)`: a helper of the module returning a static element beside a traced one
        calls = self.f.calls
        if (
            traced
            and calls is not None
            and isinstance(target, (cst.Tuple, cst.List))
            and isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value not in self.f.locals
            and not any(isinstance(el, cst.StarredElement) for el in target.elements)
        ):
            count = len(target.elements)
            for i, t_el in enumerate(target.elements):
                self.bind(t_el.value, not calls.element_static(value, i, count), env)
            return
        self.bind(target, traced, env)
