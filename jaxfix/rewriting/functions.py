"""Building lax rewrites of code inside one traced function.

What every rewrite of a condition or loop into `jnp.where`/`lax.cond`/`lax.while_loop`/
`lax.fori_loop` needs: the traced-value facts of the function, references spelled with the
file's own imports, generated statements parsed in the file's style (wrapped as black would),
helper names free in the function (shared by every fix built in it, so two fixes never pick
the same name), branch functions laid out with black's blank lines, and fixes whose one edit
spans the rewritten construct (so fixes nested inside it wait for the next round).
"""

from __future__ import annotations

import textwrap
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from jaxfix.analysis import render
from jaxfix.analysis.body_facts import assigned_names_in_small, names_read, strip_parens
from jaxfix.analysis.codegen import black_format, pin_indent
from jaxfix.analysis.cstparse import parsing_config
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts
from jaxfix.analysis.walk import statements
from jaxfix.edits import apply_edits
from jaxfix.model import Edit, Fix, ImportRequest, Safety

if TYPE_CHECKING:
    from jaxfix.rulebase import RuleContext


class FunctionRewrite:
    """Rewrite helpers bound to one traced function `info` of the file `ctx`."""

    def __init__(self, ctx: RuleContext, jc: JitContexts, info: FuncInfo) -> None:
        self.ctx = ctx
        self.jc = jc
        self.info = info
        self.facts = info.facts
        self.names = ctx.names
        self._taken: set[str] | None = None
        self._order: dict[int, int] | None = None  # `_statement_order`

    def traced(self, expr: cst.BaseExpression, stmt) -> bool:
        """`expr`, read before statement `stmt` (None: anywhere in the function), may hold a traced value."""
        return self.facts.traced(expr, stmt)

    def test_traced(self, expr: cst.BaseExpression, stmt) -> bool:
        """`bool(expr)` needs a traced value (the truth of a Python tuple/list is static)."""
        return self.facts.test_traced(expr, stmt)

    def code(self, node: cst.CSTNode) -> str:
        """`node`'s source, cut to 60 characters, for messages."""
        text = render.code_of(self.ctx.module, node).strip()
        return text if len(text) <= 60 else text[:57] + "..."

    def ref(self, qualname: str, imports: list[ImportRequest]) -> str:
        """How the file spells `qualname`; the imports that spelling needs are added to `imports`."""
        spelled, reqs = self.names.reference(qualname)
        imports.extend(reqs)
        return spelled

    def parse_stmt(self, text: str, at: cst.CSTNode | None = None) -> cst.BaseStatement:
        """Parse generated code; a line too long at `at`'s indentation is wrapped the way black would."""
        if at is not None:
            indent = self.ctx.position(at).start.column
            if any(len(line) + indent > 88 for line in text.splitlines()):
                text = black_format(text, max(88 - indent, 20))
        return self._parsed(text, cst.parse_statement)

    def parse_expr(self, text: str) -> cst.BaseExpression:
        """Parse a generated expression in the file's style."""
        return self._parsed(text, cst.parse_expression)

    def _parsed(self, text: str, parse):
        """`parse(text)` in the file's style, once per file and text: a file of many similar
        functions generates the same statements again and again (the 50k-line benchmark: 595
        texts in 4,704 parses, 13% of a check). libcst's nodes are immutable, and a fix's new
        nodes are only rendered or rebuilt, never looked up by identity, so one parse serves
        every fix that asks for the same text."""
        memo: dict = self.ctx.fact(_parsed_texts, lambda ctx: {})
        key = (parse, text)
        found = memo.get(key)
        if found is None:
            found = memo[key] = parse(text, config=parsing_config(self.ctx.module))
        return found

    def unique(self, base: str) -> str:
        """A name free in this function: not read or bound in it, nor at module level, nor an
        enclosing function's local, nor given to another fix of this function in this scan."""
        if self._taken is None:
            taken = set(names_read(self.info.node))
            parent = self.info.parent
            while parent is not None:
                taken |= parent.facts.locals if parent.facts is not None else set()
                parent = parent.parent
            self._taken = _Taken(taken, _module_taken(self.ctx, self.jc))
        return self.ctx.fresh_name(base, self._taken)

    def code_of(self, e: cst.CSTNode) -> str:
        """`e`'s source without its own parentheses, for splicing into generated code; a tuple keeps
        them (`lambda: (k.quant, k.scale)`, an argument: without them its items would split)."""
        if isinstance(e, cst.BaseExpression) and not (isinstance(e, cst.Tuple) and e.lpar):
            e = strip_parens(e)
        return render.code_of(self.ctx.module, e)

    def predicate(self, e: cst.BaseExpression, imports: list[ImportRequest]) -> cst.BaseExpression:
        """The condition as an array expression: `and`/`or`/`not` become `jnp.logical_*`."""
        if isinstance(e, cst.BooleanOperation):
            fn = "logical_and" if isinstance(e.operator, cst.And) else "logical_or"
            func = self.parse_expr(self.ref(f"jax.numpy.{fn}", imports))
            return cst.Call(
                func=func,
                args=[
                    cst.Arg(self.predicate(e.left, imports), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(self.predicate(e.right, imports)),
                ],
            )
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Not):
            func = self.parse_expr(self.ref("jax.numpy.logical_not", imports))
            return cst.Call(func=func, args=[cst.Arg(self.predicate(e.expression, imports))])
        return strip_parens(e)

    def has_comments(self, n: cst.CSTNode) -> bool:
        """`n` holds a comment (which only a rewrite that keeps its statements can keep)."""
        own = n.with_changes(leading_lines=[]) if hasattr(n, "leading_lines") else n
        return "#" in render.code_of(self.ctx.module, own)

    def guard_problem(self, test: cst.BaseExpression, stmt) -> str | None:
        """`mask is not None and mask.any()`: the static operand guards code that would fail when
        it is false, and `jnp.where`/`lax.cond` evaluate or trace both sides."""
        parts: list[cst.BaseExpression] = []

        def flatten(e: cst.BaseExpression) -> None:
            if isinstance(e, cst.BooleanOperation):
                flatten(e.left)
                flatten(e.right)
            else:
                parts.append(e)

        flatten(test)
        if len(parts) > 1:
            static = [p for p in parts if not self.traced(p, stmt)]
            if static:
                return (
                    f"the static part `{self.code(static[0])}` of the condition may guard the branch: "
                    "split it into an outer Python `if` on the static part and an inner condition on the traced part"
                )
        return None

    def enclosing_block(self, n: cst.CSTNode) -> tuple[cst.IndentedBlock | None, int]:
        """The indented block that holds statement `n`, and `n`'s index in it ((None, -1) elsewhere)."""
        parent = self.ctx.parent(n)
        if isinstance(parent, cst.IndentedBlock):
            return parent, list(parent.body).index(n)
        return None, -1

    def bound_before(self, n: cst.CSTNode) -> set[str]:
        """Parameters, plus names assigned in the function textually before `n` (a sound-enough over-approximation
        of 'definitely bound' for straight-line code; names first bound in an earlier branch count too).

        "Textually before" is the order of the function's statements (`walk.statements`, pre-order),
        which is the order their positions start in: `n`, a compound statement, starts after the
        statements that hold it and those before it, and before those inside and after it. Asking
        their positions needed the whole function rendered, where a text `check` now renders only
        up to its finding (`statement_text.StatementPositions`)."""
        bound = set(self.info.params)
        order = self._statement_order()
        at = order.get(id(n))
        if at is None:  # not a statement of the function: compare where the statements start
            start = self.ctx.position(n).start

            def earlier(stmt: cst.CSTNode) -> bool:
                p = self.ctx.position(stmt).start
                return (p.line, p.column) < (start.line, start.column)

        else:

            def earlier(stmt: cst.CSTNode) -> bool:
                return order.get(id(stmt), at) < at

        for stmt in self.facts.before:
            if not isinstance(stmt, cst.BaseSmallStatement):
                continue
            try:
                if not earlier(stmt):
                    continue
            except KeyError:  # not in the module
                continue
            if not _is_inside(stmt, n, self.ctx):
                bound |= assigned_names_in_small(stmt)
        return bound

    def _statement_order(self) -> dict[int, int]:
        """id of each statement of the function (nested ones too) -> its index in source order."""
        if self._order is None:
            self._order = {id(stmt): i for i, stmt in enumerate(statements(self.info.node))}
        return self._order

    def block_indent(self, n: cst.CSTNode) -> str:
        """The indentation step of the block holding statement `n`: a 2-space function in a 4-space
        module nests its new blocks 2 spaces deeper, not by the module's default."""
        block, _ = self.enclosing_block(n)
        if block is not None and block.indent is not None:
            return block.indent
        return parsing_config(self.ctx.module).default_indent

    def make_def(
        self, name: str, params: list[str], body: list[cst.BaseStatement], ret: str | None, *, at: cst.CSTNode
    ) -> cst.FunctionDef:
        """`def name(params):` holding `body` (`pass` when empty), ending in `return ret` when given,
        indented like the block of statement `at` that it goes into."""
        indent = self.block_indent(at)
        text = "".join(render.code_of(self.ctx.module, s) for s in body)
        if ret is not None:
            text += f"return {ret}\n"
        text = text or "pass\n"
        src = f"def {name}({', '.join(params)}):\n" + textwrap.indent(text, indent, lambda line: True)
        src = "\n".join(line.rstrip() if not line.strip() else line for line in src.split("\n"))
        return pin_indent(self.parse_stmt(src), indent)

    def layout(self, n: cst.CSTNode, stmts: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """Blank lines as black puts them: around nested defs, none at the start of a block. The
        comments of `n`'s own lines (`if x:  # why`, `else:  # why`, a comment line before `elif`),
        which no copied body carries, go with the last statement, the one that replaces `n`'s line."""
        block, index = self.enclosing_block(n)
        at_start = block is not None and index == 0
        out = []
        for i, stmt in enumerate(stmts):
            if i == 0:
                lines = list(n.leading_lines)
                if not at_start and not any(isinstance(x, cst.EmptyLine) and x.comment is None for x in lines[:1]):
                    lines.insert(0, cst.EmptyLine(indent=False))
                stmt = stmt.with_changes(leading_lines=lines)
            elif isinstance(stmt, cst.FunctionDef) or isinstance(stmts[i - 1], cst.FunctionDef):
                stmt = stmt.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            out.append(stmt)
        return _keep_header_comments(n, out)

    def finish(self, title: str, hazards: list[str], *, span: cst.CSTNode | None = None, **kw) -> Fix:
        """The rewrite `kw` (see `RuleContext.rewrite`): unsafe with the hazards in its title when there
        are any, safe otherwise; spanning all of `span`'s lines when given."""
        if hazards:
            fix = self.ctx.rewrite(f"{title} (unsafe: {'; '.join(hazards)})", Safety.UNSAFE, **kw)
        else:
            fix = self.ctx.rewrite(title, Safety.SAFE, **kw)
        return self.spanning(fix, span) if span is not None else fix

    def spanning(self, fix: Fix, node: cst.CSTNode) -> Fix:
        """One edit covering all of `node`'s lines, so that fixes of constructs nested inside it
        (which were computed on the old text) overlap with it and wait for the next round."""
        if not fix.edits:
            return fix
        source = self.ctx.source
        starts = self.ctx.fact(_splitline_starts, _splitline_starts)
        pos = self.ctx.position(node)
        a = min(starts[pos.start.line - 1], *(e.start for e in fix.edits))
        b = max(starts[min(pos.end.line, len(starts) - 1)], *(e.end for e in fix.edits))
        # every edit lies in [a, b]: only that window is rebuilt (the whole text per fix made a
        # file with thousands of fixes quadratic)
        window = apply_edits(source[a:b], [replace(e, start=e.start - a, end=e.end - a) for e in fix.edits])
        return replace(fix, edits=(Edit(a, b, window),))


def _parsed_texts(ctx: RuleContext) -> dict:
    """The key of `FunctionRewrite._parsed`'s memo among the file's facts."""
    return {}


def _module_taken(ctx: RuleContext, jc: JitContexts) -> frozenset[str]:
    """The module's functions, module-level names and import bindings: taken for every fresh name
    of the file (made once per file and analysis, not copied into each function's set)."""
    made: dict[int, tuple[JitContexts, frozenset[str]]] = ctx.fact(_module_taken, lambda ctx: {})
    if id(jc) not in made:
        names = frozenset(jc.module_funcs) | frozenset(jc.module_names) | frozenset(ctx.names.bindings)
        made[id(jc)] = (jc, names)  # the analysis kept with its names: its id stays its own
    return made[id(jc)][1]


class _Taken(set):
    """A function's taken names (those `fresh_name` adds too) in front of the module's, which
    are shared by every function of the file rather than copied into each (quadratic on a file
    with thousands of fixed functions)."""

    def __init__(self, own: set[str], shared: frozenset[str]) -> None:
        super().__init__(own)
        self.shared = shared

    def __contains__(self, name: object) -> bool:
        return set.__contains__(self, name) or name in self.shared


def _splitline_starts(ctx: RuleContext) -> list[int]:
    """Offsets where the lines of `ctx.source` begin, as `str.splitlines` splits them (computed
    once per file: `spanning` asks it per fix)."""
    starts = [0]
    for line in ctx.source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _is_inside(a: cst.CSTNode, b: cst.CSTNode, ctx: RuleContext) -> bool:
    p = ctx.parent(a)
    while p is not None:
        if p is b:
            return True
        p = ctx.parent(p)
    return False


def _header_comments(n: cst.CSTNode) -> list[str]:
    """Comments on the header lines of a compound statement and of its `else` clause, the comment
    lines before its `elif`/`else` and those at the end of its blocks: the text a rewrite that
    copies only the blocks' statements (and an `elif` without its leading lines) would drop."""
    out: list[str] = []

    def block(b: cst.BaseSuite) -> None:
        if isinstance(b, cst.IndentedBlock):
            if b.header.comment is not None:
                out.append(b.header.comment.value)
            out.extend(line.comment.value for line in b.footer if line.comment is not None)
        elif isinstance(b, cst.SimpleStatementSuite) and b.trailing_whitespace.comment is not None:
            out.append(b.trailing_whitespace.comment.value)

    def clause(c: cst.CSTNode | None) -> None:
        if c is None:
            return
        out.extend(line.comment.value for line in c.leading_lines if line.comment is not None)
        if isinstance(c, cst.Else):  # an `elif` is copied whole into the false branch, all but its leading lines
            block(c.body)

    if isinstance(n, (cst.If, cst.While, cst.For)):
        block(n.body)
        clause(n.orelse)
    return out


def _keep_header_comments(n: cst.CSTNode, stmts: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    comments = _header_comments(n)
    if not comments or not stmts:
        return stmts
    last = stmts[-1]
    if len(comments) == 1 and isinstance(last, cst.SimpleStatementLine) and last.trailing_whitespace.comment is None:
        trailing = last.trailing_whitespace.with_changes(
            whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(comments[0])
        )
        return [*stmts[:-1], last.with_changes(trailing_whitespace=trailing)]
    lines = [cst.EmptyLine(comment=cst.Comment(c)) for c in comments]
    return [*stmts[:-1], last.with_changes(leading_lines=[*last.leading_lines, *lines])]
