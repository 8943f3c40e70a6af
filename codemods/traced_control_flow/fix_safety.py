"""What a traced-control-flow fix must prove before it is `safe` (issue #29, item 4).

A rule's `decide` builds the rewrite; this module holds it back when the rewrite could turn code
that works into code that fails:

- the rewrite makes values traced (`lax.cond`/`jnp.where` results, a `fori_loop`/`while_loop`
  carry, `jnp.logical_and`) that the function then uses where only a Python value works: a shape,
  an `axis=`, `int()`, `range()`, a slice bound, a static argument, a branch condition
  (`static_positions.static_uses`). If the condition was static after all, the original ran and
  the rewrite raises (ConcretizationTypeError); if it was traced, no rewrite of this site can
  work. Manual, saying where the value goes;
- the condition is traced only because it reads a data attribute of a traced object
  (`state.flag`): whether that attribute is an array leaf or Python aux data of a class this file
  does not show is a guess (a flag in a custom pytree's `tree_flatten` aux data made a `lax.cond`
  fail). Unsafe, saying which attribute;
- the condition is the bare truthiness of a value (`if axes:`, `while not todo:`) that this file
  does not show to be an array or a number: under a trace, `None` and a list/tuple/dict (of
  arrays, or of static things) pass such a test today, and `lax.cond`/`jnp.where` accept only a
  scalar array. levanter's `_maybe_flatten(q, axes, name)` (`if axes:` on a list of axes built by
  a project helper from `q.axes`) ran under jit and its `lax.cond` rewrite raised. Unsafe, saying
  which value;
- a branch calls the function again (a recursion the Python test ends, which `lax.cond`, tracing
  both branches, would never end): manual; the condition reads a parameter with a Python number
  or bool default (`i=0`): unsafe, a call with the default branches in Python today
  (Ollie-spoon/flax-dae's `populate_tokens`, whose safe fix raised where the default worked);
- a condition traced only by inference (`jaxfix.analysis.proven_traced`: a caller in another
  module, a framework convention, the one pytree class whose `__call__` a traced argument may be)
  is not reported at all (`is_proven_traced`), so no fix is decided for it.

The `static_argnames` fix keeps the Python code and makes no value traced: it is left as decided.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from jaxfix.analysis import render
from jaxfix.analysis.body_facts import assigned_names_in, names_read, number_literal
from jaxfix.analysis.definite_binding import maybe_unbound_before
from jaxfix.analysis.local_calls import calls_named
from jaxfix.analysis.proven_traced import ProvenTraced, proven_traced
from jaxfix.analysis.python_values import read_off_known
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.static_positions import static_uses
from jaxfix.analysis.static_values import ARRAY_ATTRIBUTES, is_static_attr
from jaxfix.analysis.value_kinds import ARRAY, NUMBER, ValueKinds
from jaxfix.analysis.walk import walk
from jaxfix.model import Fix, Safety
from jaxfix.rewriting.functions import FunctionRewrite

# site kinds whose rewrite turns a Python `if`/loop/operator into a traced construct
_TRACING_KINDS = frozenset({"if", "elif", "ifexp", "minmax", "while", "for", "boolop", "not"})


def proven(fn: FunctionRewrite, site, fix: Fix | None) -> Fix | None:
    """`fix` as decided, or held back (manual or unsafe, with the reason) when its safety is not proven."""
    if fix is None or fix.safety is not Safety.SAFE or site.kind not in _TRACING_KINDS:
        return fix
    if fix.title.startswith("make "):  # the static-argument fix: nothing becomes traced
        return fix
    where = _static_use_after(fn, site)
    if where is not None:
        name, why = where
        return fn.ctx.manual(
            f"a rewrite would make `{name}` a traced value, but the function needs it as a Python value "
            f"({why}): make the condition static (a static argument) or restructure by hand"
        )
    unbound = _maybe_unbound_read(fn, site)
    if unbound is not None:
        reason = (
            f"`{unbound}` is bound on some paths only before this point; the rewrite reads it on every path "
            "(a `NameError` where the original ran)"
        )
        return _unsafe(fix, reason)
    again = _recursive_branch(fn, site)
    if again is not None:
        return fn.ctx.manual(
            f"a branch calls `{again}` again: `lax.cond` traces both branches, so the recursion the Python "
            "`if` ends would not end; restructure by hand (a `lax.while_loop` over the recursion's state)"
        )
    defaulted = _python_default_read(fn, site)
    if defaulted is not None:
        name, default = defaulted
        reason = (
            f"`{name}` has the Python default `{default}`: a call that leaves it branches in Python today, "
            "while `lax.cond` traces both branches, which may only be valid where the test holds"
        )
        return _unsafe(fix, reason)
    attr = _guessed_attribute(fn, site)
    if attr is not None:
        return _unsafe(fix, f"`{attr}` may be static aux data of its pytree, which this file does not show")
    tested = truthiness_of_unknown(fn, site)
    if tested is not None:
        reason = (
            f"`{render.code_of(fn.ctx.module, tested)}` is tested for truthiness and this file does not show it is an array: a `None` or a "
            "list/tuple/dict passes that test under a trace, and the rewrite needs a scalar array"
        )
        return _unsafe(fix, reason)
    return fix


def _recursive_branch(fn: FunctionRewrite, site) -> str | None:
    """The name of the function when a branch of the `if` at `site` calls it again (`f(...)` or
    `self.f(...)`): a recursion the Python test ends."""
    func = fn.info.node
    if not isinstance(func, cst.FunctionDef) or not isinstance(site.node, (cst.If, cst.IfExp)):
        return None
    name = func.name.value
    branches = [b for b in (site.node.body, site.node.orelse) if b is not None]
    return name if any(calls_named(b, {name}, bare_receiver=True) for b in branches) else None


def _python_default_read(fn: FunctionRewrite, site) -> tuple[str, str] | None:
    """(name, default) for a parameter the condition of `site` reads whose default is a Python
    number or bool (`i=0`, `flag=False`; a `None` default is the static guard a split keeps) and which the function does not rebind: the function is
    meant to run with that Python value too. Ollie-spoon/flax-dae@<heldout19> dae/data_processing.py:243,
    `def populate_tokens(self, padded, tokenized, i=0): if i < self.max_tokens:` (a recursion
    counter): its safe `lax.cond` fix raised where a call with the default worked (found by running
    the fixed code, session 25)."""
    func = fn.info.node
    test = getattr(site.node, "test", None)
    if not isinstance(func, cst.FunctionDef) or test is None:
        return None
    stmt = site.stmt if site.stmt is not None else site.node
    traced = fn.facts.env_before(stmt)  # only a parameter the condition is traced through counts
    read = names_read(test) & set(traced)
    rebound = assigned_names_in(list(func.body.body)) if isinstance(func.body, cst.IndentedBlock) else set()
    params = (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
    for p in params:
        if p.name.value in read and p.default is not None and p.name.value not in rebound:
            if number_literal(p.default) is not None:
                return p.name.value, render.code_of(fn.ctx.module, p.default)
    return None


def is_proven_traced(fn: FunctionRewrite, site) -> bool:
    """This file proves the condition or operand of `site` traced (`proven_traced`: made by an
    array operation, or passed traced into a function this file transforms, through the calls of
    this file): the family reports only such sites, so every fix `proven` decides is on one. On
    four pools of public code nobody had tuned on, 1 of 208 traced-control-flow findings inferred
    from a caller in another module, a framework convention or a guessed pytree class was real;
    where the analysis cannot tell, it does not report (issue #29)."""
    proven = fn.ctx.fact(ProvenTraced, proven_traced)
    proof = proven.facts(fn.info)
    if proof is None:
        return False
    exprs, stmt = decided_values(site)
    if proven.dead_branch(fn.info, stmt):
        return False  # a branch a literal flag of every traced call rules out
    if not exprs:
        return True
    return any(proof.traced(e, stmt) for e in exprs)


def decided_values(site) -> tuple[tuple[cst.BaseExpression, ...], cst.CSTNode]:
    """The values `site` turns into Python values (its named operands, or the condition it
    tests), and the statement they are read before."""
    exprs = site.traced or tuple(e for e in (_decided_by(site.node),) if e is not None)
    return exprs, site.stmt if site.stmt is not None else site.node


def _decided_by(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The value a site without named operands turns into a Python bool or int: an `if`/`while`/
    `assert` test, the left operand of `and`/`or`, the operand of `not`, a `for`'s `range(...)`."""
    if isinstance(node, cst.BooleanOperation):
        return node.left
    if isinstance(node, cst.UnaryOperation):
        return node.expression
    if isinstance(node, cst.For):
        return node.iter
    return getattr(node, "test", None)


def _unsafe(fix: Fix, reason: str) -> Fix:
    return replace(fix, safety=Safety.UNSAFE, title=f"{fix.title} (unsafe: {reason})")


def truth_tested(site) -> cst.BaseExpression | None:
    """`x` when the condition of `site` (an `if`, `elif`, conditional expression or `while`) is `x` or
    `not x` with `x` a name, attribute or item read: a bare truth test, which under a trace fails
    only when `x` holds an array; `None`, an object or a container pass it there as in Python."""
    if site.kind not in ("if", "elif", "ifexp", "while"):
        return None
    test = getattr(site.node, "test", None)
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if not isinstance(test, (cst.Name, cst.Attribute, cst.Subscript)):
        return None
    return test


def truthiness_of_unknown(fn: FunctionRewrite, site) -> cst.BaseExpression | None:
    """The value `site` tests for truthiness (`truth_tested`) when this file does not show it to be an
    array or a number: its kind (`ValueKinds`) is neither, and it is not a local bound only to
    comparisons (`is_a_best = sep_a > sep_b`: a comparison makes an array or a bool; kngwyu/phyjax2d
    src/phyjax2d/impl.py:499)."""
    test = truth_tested(site)
    if test is None:
        return None
    kinds = ValueKinds.of(fn.ctx)
    if kinds.of_expr(test, site.node).kind in (ARRAY, NUMBER):
        return None
    if isinstance(test, cst.Name):
        scope = kinds.idx.resolve(test.value, site.node)
        info = kinds.idx.scope_info(scope) if scope is not None else None
        bindings = info.bindings.get(test.value, []) if info is not None else []
        if (
            bindings
            and test.value not in info.params
            and all(isinstance(b, (cst.Assign, cst.AnnAssign)) and isinstance(b.value, cst.Comparison) for b in bindings)
        ):
            return None
    return test


def _maybe_unbound_read(fn: FunctionRewrite, site) -> str | None:
    """A local the rewritten statement reads (and does not bind itself) that an earlier branch
    binds on some paths only (`definite_binding`)."""
    func = fn.info.node
    if not isinstance(func, cst.FunctionDef):
        return None
    stmt = _site_statement(fn, site)
    if not isinstance(stmt, cst.BaseStatement):
        return None
    read = names_read(stmt) - assigned_names_in([stmt])
    unbound = read & maybe_unbound_before(func, stmt)
    return min(unbound) if unbound else None


def _site_statement(fn: FunctionRewrite, site) -> cst.CSTNode:
    """The statement the rewrite replaces: the site's own compound statement, or the statement
    holding the site's expression."""
    if isinstance(site.node, (cst.If, cst.While, cst.For)):
        return site.node
    node = site.stmt if site.stmt is not None else site.node
    return node


def _static_use_after(fn: FunctionRewrite, site) -> tuple[str, str] | None:
    """(name, why) for a value the rewrite makes traced that the function uses in a static position
    outside the rewritten statement."""
    stmt = _site_statement(fn, site)
    names = set(assigned_names_in([stmt])) if isinstance(stmt, (cst.If, cst.While, cst.For)) else set()
    if isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
        names |= {t.value for t in targets if isinstance(t, cst.Name)}
    if isinstance(stmt, cst.For):
        names |= {n.value for n in _names(stmt.target)}
    if not names:
        return None
    body = fn.info.node
    found = static_uses(body, names, fn.names.qualify, skip=stmt)
    for name in sorted(found):
        return name, found[name]
    return None


def _names(target: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _names(el.value)]
    return []


def _guessed_attribute(fn: FunctionRewrite, site) -> str | None:
    """A data attribute `obj.attr` the traced condition of `site` reads off a traced object (not an
    array attribute, not a method called), when the condition reads no traced name directly."""
    test = getattr(site.node, "test", None)
    if test is None or not isinstance(site.node, (cst.If, cst.While, cst.IfExp)):
        return None
    facts = fn.facts
    env = facts.env_before(site.stmt) if site.stmt is not None else frozenset(facts.all_traced)
    # objects whose class is shown (`ProvenTraced.known_objects`): their data attributes are no guess
    known = fn.ctx.fact(ProvenTraced, proven_traced).known_objects(fn.info)
    found = _AttributeReads(fn, env, known)
    walk(test, found)
    reads, direct = found.reads, found.direct
    if reads and not direct:
        return reads[0]
    return None


class _AttributeReads(cst.CSTVisitor):
    """The data attributes a condition reads off traced objects (`reads`, as written), and whether
    it reads a traced value directly (`direct`). One class, walked with `walk`: a class per call and
    libcst's visit, which rebuilt every node it passed, cost more than the rest of the test."""

    def __init__(self, fn: FunctionRewrite, env: frozenset[str], known) -> None:
        super().__init__()
        self.fn, self.facts, self.env, self.known = fn, fn.facts, env, known
        self.reads: list[str] = []
        self.direct = False

    def visit_Call(self, n: cst.Call) -> bool:
        if is_staged_call_name(self.fn.names.qualify(n.func)):
            self.direct = True  # `jnp.sum(state.x)` is traced under the trace whatever `state.x` holds
            return False
        # a method called on a traced value computes with it: look at its receiver and arguments
        for arg in n.args:
            walk(arg.value, self)
        walk(n.func.value if isinstance(n.func, cst.Attribute) else n.func, self)
        return False

    def visit_Attribute(self, n: cst.Attribute) -> bool:
        attr = n.attr.value
        if attr in ARRAY_ATTRIBUTES or is_static_attr(attr):
            return True
        if self.facts.expr_traced(n, self.env) and self.facts.expr_traced(n.value, self.env):
            if read_off_known(n, self.known):
                self.direct = True
            else:
                self.reads.append(render.code_of(self.fn.ctx.module, n))
            return False
        return True

    def visit_Name(self, n: cst.Name) -> None:
        if self.facts.expr_traced(n, self.env):
            self.direct = True
