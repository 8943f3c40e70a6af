"""What the trace-time rules (JAX401-JAX404) share: the functions they look into, and how they
word a finding and lay out the one statement a fix writes.

The traced functions come from the file's `jit_contexts` fact (computed once per file for all
rules); each function's own sites come from `jaxfix.analysis.trace_sites.own_sites`, shared the
same way.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.codegen import black_format
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.transforms import TRANSFORM_TOKENS  # noqa: F401 (the text test of the rules that need no more than a transform's name)
from jaxfix.model import Fix, Safety
from jaxfix.rulebase import RuleContext

LINE_LENGTH = 88  # black's default, which the fixes wrap to


def traced_functions(ctx: RuleContext) -> list[FuncInfo]:
    """The functions of the file that run under a trace and whose values are known."""
    jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
    return list(jc.traced_functions())


def code(ctx: RuleContext, node: cst.CSTNode) -> str:
    """`node` as written in the file."""
    return ctx.module.code_for_node(node)


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
