"""What the trace-time rules (JAX401-JAX405) share: the functions they look into, and how they
word a finding and lay out the one statement a fix writes.

The traced functions come from the file's `jit_contexts` fact (computed once per file for all
rules); each function's own sites come from `jaxfix.analysis.trace_sites.own_sites`, shared the
same way.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis import filememo, render
from jaxfix.analysis.codegen import black_format
from jaxfix.analysis.def_order import DefOrder
from jaxfix.analysis.jit_contexts import CALLED_FROM_ELSEWHERE, CALLED_FROM_TESTS, FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.transforms import (  # TRANSFORM_TOKENS: the text test of the rules that need no more than a transform's name
    JIT_NAMES,
    TRANSFORM_TOKENS,  # noqa: F401
)
from jaxfix.model import Fix, Safety
from jaxfix.rulebase import RuleContext

LINE_LENGTH = 88  # black's default, which the fixes wrap to


def traced_functions(ctx: RuleContext) -> list[FuncInfo]:
    """The functions of the file that run under a trace and whose values are known: not a def that
    a later def of the same name replaced before the transform that names it ran, nor one nested
    in such a def (`def_order`: a notebook's plain-Python redefinition of a jitted function)."""
    jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
    infos = list(jc.traced_functions())
    order: DefOrder | None = None
    out = []
    for info in infos:
        top = info
        while top.parent is not None and all(r.startswith("defined inside traced `") for r in top.reasons):
            top = top.parent
        if top.parent is None and isinstance(top.node, cst.FunctionDef):
            if order is None:
                order = DefOrder(ctx.module, ctx.top_level_statement)
            if (
                order.shadowed(top.node)
                and all(r.startswith(_OWN_ENTRIES) for r in top.reasons)
                and not any(order.may_mean(top.node, site.node) for site in top.jit_sites)
            ):
                continue
        out.append(info)
    return out


# reasons `jit_contexts` gives a function traced by a transform of this module itself
_OWN_ENTRIES = ("jitted", "vectorised", "body of ")
_OWN_PARTIAL = " of a partial"  # `jax.pmap(partial(step, ...))`: "pmap of a partial"
# reasons that hand the trace on from another function of the module, named in backquotes
_HANDED_ON = ("defined inside traced `", "called from traced `", "read on a traced object in `", "runs when traced `")
# the short names of the transforms that compile, and keep the trace for later calls
_COMPILING = frozenset(name.rsplit(".", 1)[-1] for name in JIT_NAMES)


def certainly_traced(jc: JitContexts, info: FuncInfo) -> bool:
    """Whether some chain of reasons leads from `info` to a transform applied in this module (a
    `jit`, `vmap`, lax body...). A function traced only because another module's code calls it
    (`FuncInfo.called_from`, the project call graph's reading of that call) is a guess as far as a
    fix goes: the entry may map only some arguments (`vmap(in_axes=None)`), or be test code."""
    return _reached(jc, info, lambda reason: reason.startswith(_OWN_ENTRIES) or reason.endswith(_OWN_PARTIAL))


def traced_from_tests_only(jc: JitContexts, info: FuncInfo) -> bool:
    """`info` is under a trace only because test code of another module jits what calls it (a
    test, a script under `tests/`): no transform of this module reaches it, and every other
    module's entry that does is test code. A test chooses its arguments (which flags, which
    defaults), so what it traces is not shown to be how the project runs the code."""
    if certainly_traced(jc, info):
        return False
    return _reached(jc, info, lambda r: r.startswith(CALLED_FROM_TESTS)) and not _reached(
        jc, info, lambda r: r.startswith(CALLED_FROM_ELSEWHERE + ":")
    )


def kept_trace(jc: JitContexts, info: FuncInfo) -> bool:
    """Whether some chain of reasons leads from `info` to a transform of this module that keeps
    its trace for later calls: a `jit`/`pmap` (or a partial of one) or a lax body (measured: an
    eager `lax.scan` reuses its body's trace). An eager `vmap` or `grad` traces at every call."""

    def keeps(reason: str) -> bool:
        if reason.startswith(("jitted", "body of ")):
            return True
        if reason.startswith("vectorised ("):
            return reason[len("vectorised (") : -1] in JIT_NAMES
        return reason.endswith(" of a partial") and reason.split(" ", 1)[0] in _COMPILING

    return _reached(jc, info, keeps)


def _reached(jc: JitContexts, info: FuncInfo, entry) -> bool:
    """Some chain of `jit_contexts` reasons from `info` ends at a reason `entry` accepts."""
    by_name = _traced_by_name(jc)
    seen: set[int] = set()
    work = [info]
    while work:
        cur = work.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        for reason in cur.reasons:
            if entry(reason):
                return True
            if reason.startswith("defined inside traced `") and cur.parent is not None:
                work.append(cur.parent)
            elif reason.startswith(_HANDED_ON):
                work.extend(by_name.get(reason.split("`")[1], ()))
    return False


_BY_NAME: list = [None, {}]  # [JitContexts, its traced functions by name]: `_traced_by_name` of the last one


@filememo.on_forget
def _forget_by_name() -> None:
    _BY_NAME[:] = [None, {}]


def _traced_by_name(jc: JitContexts) -> dict[str, list[FuncInfo]]:
    """The traced functions of `jc` by name, made once per analysis: `_reached` asks per finding,
    and building it each time made a file with thousands of findings quadratic."""
    if _BY_NAME[0] is not jc:
        by_name: dict[str, list[FuncInfo]] = {}
        for other in jc.functions.values():
            if other.in_trace:
                by_name.setdefault(other.name, []).append(other)
        _BY_NAME[:] = [jc, by_name]
    return _BY_NAME[1]


def code(ctx: RuleContext, node: cst.CSTNode) -> str:
    """`node` as written in the file."""
    return render.code_of(ctx.module, node)


def short(ctx: RuleContext, node: cst.CSTNode) -> str:
    """`node` on one line, cut to 60 characters, for a message."""
    text = " ".join(code(ctx, node).split())
    return text if len(text) <= 60 else text[:57] + "..."


def message(text: str, fix: Fix) -> str:
    """A finding's message: what is wrong, then what the fix does (reporters show a manual fix's
    title themselves)."""
    return text if fix.safety is Safety.MANUAL else f"{text}; {fix.title}"


def fits(ctx: RuleContext, stmt: cst.CSTNode, text: str) -> str:
    """`text` (one small statement replacing `stmt`) wrapped the way black would when the line is too long."""
    indent = ctx.position(stmt).start.column
    if len(text) + indent <= LINE_LENGTH:
        return text
    line = ctx.parent(stmt)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return text
    # libcst indents the continuation lines to the block
    return black_format(text, max(LINE_LENGTH - indent, 20)).rstrip("\n")
