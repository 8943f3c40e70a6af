"""The hoist planner's text (part of `planner._Planner`): where hoisted code goes (module level, a
cached factory, above the loop), the statements and calls it writes, their blank lines, and the
finished `Fix`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import libcst as cst

from codemods.jit_placement.captures import ABOVE, FACTORY, Decision, ManualFix
from codemods.jit_placement.site import Site
from jaxfix.analysis import render
from jaxfix.analysis.codegen import black_format
from jaxfix.analysis.cstparse import parsing_config
from jaxfix.analysis.names import imported_by
from jaxfix.model import Fix, Safety
from jaxfix.rulebase import RuleContext

_Manual = ManualFix  # the planner's name for "the fix must be done by hand"

_BLANK = cst.EmptyLine(indent=False)  # a blank line inside a block, without the block's indent (W293)


class Layout:
    """Where the hoisted code goes and how it reads (`planner._Planner`)."""

    def _module_anchor(self, site: Site, hoist_time_names: Iterable[str]) -> tuple[str, cst.CSTNode]:
        """("before"|"after", top-level statement) where a module-level hoist goes."""
        top = self.idx.top_level_statement(site.node)
        body = self.ctx.module.body
        index = self.ctx.top_level_index(top)
        if not site.function:
            # a module-level loop: go before the outermost loop
            top = self.idx.statement_in(site.loops[-1], self.ctx.module) if site.loops else top
            index = self.ctx.top_level_index(top)
        latest = -1
        for name in hoist_time_names:
            if self.idx.resolve(name, top) is not self.ctx.module:
                continue
            positions = sorted(self.ctx.top_level_index(stmt) for stmt in self.idx.module_bindings(name))
            earlier = [p for p in positions if p < index]
            if earlier and all(_same_import(body[p], body[earlier[-1]], name) for p in positions if p >= index):
                # a later cell repeating `import jax` binds the same module: the earlier import serves
                # (heldout26, jax-rl in_depth.ipynb: a hoist placed after cell 64's `import jax` left
                # cell 11's use of it unbound)
                positions = earlier
            if positions:
                latest = max(latest, positions[-1])
        if latest >= index:
            if latest == index or not site.function:
                raise _Manual("a name the hoisted code needs is bound only at or after this point")
            return "after", body[latest]
        return "before", top

    def _statement(self, code: str, leading: Iterable[cst.EmptyLine] = (), indent: int = 0) -> cst.SimpleStatementLine:
        if len(code) + indent > 88:
            # black's layout at the width left, never narrower than 40 columns
            code = black_format(code, max(88 - indent, 40)).rstrip("\n")
        stmt = _assignment(self.ctx, code) or cst.parse_statement(code, config=parsing_config(self.ctx.module))
        return stmt.with_changes(leading_lines=list(leading))

    def _module_leading(self, where: str, anchor: cst.CSTNode) -> list[cst.EmptyLine]:
        if where == "after":
            blank = 2 if isinstance(anchor, (cst.FunctionDef, cst.ClassDef)) else 0
            return [cst.EmptyLine()] * blank
        blank = 0
        for line in anchor.leading_lines:
            if line.comment is not None:
                break
            blank += 1
        body = self.ctx.module.body
        index = self.ctx.top_level_index(anchor)
        if index == 0:
            blank = 0
        else:
            previous = body[index - 1]
            if isinstance(previous, (cst.FunctionDef, cst.ClassDef)):
                blank = 2
            elif isinstance(previous, cst.SimpleStatementLine) and any(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in previous.body
            ):
                blank = 1  # black: one blank line between imports and other statements
            blank = min(blank, 2)
        return [cst.EmptyLine()] * blank

    def _hoist_module(
        self, site: Site, stmts: list[cst.BaseStatement], hoist_time_names: Iterable[str]
    ) -> tuple[dict, dict]:
        where, anchor = self._module_anchor(site, hoist_time_names)
        leading = self._module_leading(where, anchor)
        if isinstance(stmts[0], (cst.FunctionDef, cst.ClassDef)) and leading:
            leading = [cst.EmptyLine()] * 2  # black: two blank lines around a module-level def
        first = stmts[0].with_changes(leading_lines=leading)
        stmts = [first, *stmts[1:]]
        if where == "after":
            return {}, {anchor: stmts}
        return {anchor: stmts}, {}

    def _call_with(self, call: cst.Call, func: str | cst.BaseExpression, extra: list[str], keyword: bool) -> cst.Call:
        """`call` calling `func` instead, with the names `extra` appended (as keywords with `keyword`)."""
        args = list(call.args)
        if args and extra:
            last = args[-1]
            if last.comma is cst.MaybeSentinel.DEFAULT or isinstance(last.comma, cst.MaybeSentinel):
                args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        for i, name in enumerate(extra):
            arg = cst.Arg(
                value=cst.Name(name),
                keyword=cst.Name(name) if keyword else None,
                equal=(
                    cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
                    )
                    if keyword
                    else cst.MaybeSentinel.DEFAULT
                ),
            )
            if i < len(extra) - 1:
                arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args.append(arg)
        return call.with_changes(func=cst.Name(func) if isinstance(func, str) else func, args=args)

    def _code(self, node: cst.CSTNode) -> str:
        return render.code_of(self.ctx.module, node)

    def _merge_static(self, call: cst.Call, rest: list[str], static: list[str]) -> list[str]:
        for i, arg in enumerate(call.args[1:]):
            if arg.keyword is not None and arg.keyword.value == "static_argnames":
                value = arg.value
                if isinstance(value, cst.SimpleString):
                    existing = [self._code(value)]
                elif isinstance(value, (cst.Tuple, cst.List)):
                    existing = [self._code(e.value) for e in value.elements]
                else:
                    raise _Manual("static_argnames is not a literal; add the captured static names by hand")
                names = existing + [self.ctx.literal(n) for n in static]
                rest[i] = f"static_argnames=({', '.join(names)}{',' if len(names) == 1 else ''})"
                return rest
        names = [self.ctx.literal(n) for n in static]
        return [*rest, f"static_argnames=({', '.join(names)}{',' if len(names) == 1 else ''})"]

    # placing the hoisted callable -------------------------------------------------------
    def _finish(
        self,
        site: Site,
        reasons: list[str],
        title: str,
        replace: dict,
        before: dict,
        after: dict,
        phrases: list[str] | None = None,
    ) -> tuple[Fix, str]:
        """The fix: unsafe when there are `reasons`; the note lists `phrases` (default: the reasons)."""
        safety = Safety.UNSAFE if reasons else Safety.SAFE
        if site.binding is not None:
            self._remove_binding(site.binding, replace)
        fix = self.ctx.rewrite(
            title, safety, replace=replace, insert_before=before, insert_after=after, imports=self.imports
        )
        return fix, "; ".join(reasons if phrases is None else phrases)

    def _place(
        self,
        site: Site,
        decision: Decision,
        *,
        base: str,
        what: str,
        prelude: list[cst.BaseStatement],
        value: str | None,
        make_call: Callable[[cst.Call, cst.BaseExpression], cst.Call],
        calls: list[cst.Call],
        replace: dict,
        hoist_names: set[str],
        local_name: str | None = None,
        remove: cst.CSTNode | None = None,
    ) -> tuple[Fix, str]:
        """Put the hoisted callable where `decision` says and call it from `calls`.

        `prelude`: statements the callable needs first (the moved def); `value`: the transform
        expression that makes it (None: the prelude's decorated def is the callable, named
        `local_name`); `remove`: the statement the prelude moves away from."""
        before: dict = {}
        after: dict = {}
        keys = decision.keys
        if decision.target == FACTORY:
            name = self._new_name(base, site)
            cache, imports = self.ctx.names.reference("functools.cache")
            self.imports.extend(imports)
            returned = value if value is not None else local_name
            factory = self._factory(name, keys, cache, prelude, returned)
            before, after = self._hoist_module(site, [factory], set())
            callee: cst.BaseExpression = cst.Call(
                func=cst.Name(name), args=with_commas([cst.Arg(value=cst.Name(k)) for k in keys])
            )
            title = f"Make the jitted {what} once per value of {_spelled(keys)} in a cached factory `{name}`"
        elif decision.target == ABOVE:
            anchor = self.idx.statement_of(decision.loop)
            if not isinstance(self.idx.parent(anchor), (cst.IndentedBlock, cst.Module)):
                raise _Manual("the loop shares its line with the statement before it; hoist above it by hand")
            depth = sum(1 for a in self.idx.ancestors(anchor) if isinstance(a, cst.IndentedBlock))
            if value is not None:
                name = local_name or self._fresh(f"{base.strip('_') or 'fn'}_{'_'.join(reversed(site.kinds))}")
                stmts = [*prelude, self._statement(f"{name} = {value}", indent=4 * depth)]
                if prelude:
                    stmts[-1] = stmts[-1].with_changes(leading_lines=[_BLANK])
            else:
                name, stmts = local_name, list(prelude)
            block = self.idx.parent(anchor)
            first = isinstance(block, cst.IndentedBlock) and block.body[0] is anchor
            if prelude and not first:
                stmts[0] = stmts[0].with_changes(leading_lines=[_BLANK])
            if value is None:
                self._blank_line_before(anchor, replace)  # one blank line after a nested def, as black
            before = {anchor: stmts}
            callee = cst.Name(name)
            title = f"Make the jitted {what} once, above the loop, as `{name}`"
        else:
            if value is not None:
                name = self._new_name(base, site)
                stmt = self._statement(f"{name} = {value}")
                if prelude:
                    stmt = stmt.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
                stmts = [*prelude, stmt]
            else:
                name, stmts = local_name, list(prelude)
            before, after = self._hoist_module(site, stmts, hoist_names)
            if after and prelude:
                raise _Manual("a name the hoisted def needs is bound only after the function")
            callee = cst.Name(name)
            title = f"Hoist the transformed {what} to module level as `{name}`"
        for call in calls:
            replace[call] = make_call(call, callee)
        if remove is not None:
            block = self.idx.parent(remove)
            replace[remove] = cst.RemovalSentinel.REMOVE
            if isinstance(block, cst.IndentedBlock) and block.body[0] is remove:
                self._drop_leading_blank_lines(block.body[1], replace)
        return self._finish(site, decision.unsafe, title, replace, before, after, decision.phrases)

    def _factory(
        self, name: str, keys: list[str], cache: str, prelude: list[cst.BaseStatement], returned: str
    ) -> cst.FunctionDef:
        """`@functools.cache def name(keys): <prelude>; return <returned>`, black-formatted."""
        text = f"@{cache}\ndef {name}({', '.join(keys)}):\n    return {returned}\n"
        if any(len(line) > 88 for line in text.splitlines()):
            text = black_format(text, 88)
        fdef = cst.parse_statement(text, config=parsing_config(self.ctx.module))
        if prelude:
            ret = fdef.body.body[-1].with_changes(leading_lines=[_BLANK])
            body = [*[s.with_changes(leading_lines=[]) for s in prelude[:1]], *prelude[1:], ret]
            fdef = fdef.with_changes(body=fdef.body.with_changes(body=body))
        return fdef

    def _blank_line_before(self, stmt: cst.CSTNode, replace: dict) -> None:
        """`stmt` gets one leading blank line (keeping the replacements planned inside it)."""
        if stmt.leading_lines and stmt.leading_lines[0].comment is None:
            return
        self._with_leading_lines(stmt, [_BLANK, *stmt.leading_lines], replace)

    def _with_leading_lines(self, stmt: cst.CSTNode, lines: list[cst.EmptyLine], replace: dict) -> None:
        """Replace `stmt` by itself with `lines` before it, the replacements planned inside it applied
        (a replacement of the statement itself would otherwise hide them)."""
        inner = {old: new for old, new in replace.items() if any(a is stmt for a in self.idx.ancestors(old))}
        new_stmt = stmt
        for old, new in inner.items():
            new_stmt = new_stmt.deep_replace(old, new)
            del replace[old]
        replace[stmt] = new_stmt.with_changes(leading_lines=lines)

    def _transform_text(self, site: Site, inner: str, static: list[str], n: int = 0, k: int = 0) -> str:
        """Re-spell the transform chain around `inner`: static_argnames on the outer jit, in_axes for new args."""
        text = inner
        for depth, call in reversed(list(enumerate(site.chain))):
            rest = [self._code(a).strip().rstrip(",").strip() for a in call.args[1:]]
            kind = site.kinds[depth]
            if kind in ("vmap", "pmap", "filter_pmap") and k:
                rest = self._extend_in_axes(call, rest, n, k)
            if depth == 0 and static and kind == "jit":
                rest = self._merge_static(call, rest, static)
            text = f"{self._code(call.func)}({', '.join([text, *rest])})"
        return text

    def _extend_in_axes(self, call: cst.Call, rest: list[str], n: int, k: int) -> list[str]:
        for i, arg in enumerate(call.args[1:]):
            if (arg.keyword is not None and arg.keyword.value == "in_axes") or (arg.keyword is None and i == 0):
                value = arg.value
                if isinstance(value, (cst.Integer, cst.Name)) and not (
                    isinstance(value, cst.Name) and value.value != "None"
                ):
                    axes = ", ".join([self._code(value)] * n + ["None"] * k)
                elif isinstance(value, cst.Tuple):
                    axes = ", ".join([self._code(e.value) for e in value.elements] + ["None"] * k)
                else:
                    raise _Manual("in_axes is not a literal; extend it for the captured values by hand")
                rest[i] = f"in_axes=({axes})" if arg.keyword is not None else f"({axes})"
                return rest
        return [*rest, f"in_axes=({', '.join(['0'] * n + ['None'] * k)})"]

    def _remove_binding(self, stmt: cst.SimpleStatementLine, replace: dict) -> None:
        """Delete the `f = T(F)` line; the statement that becomes first in its block loses its blank lines."""
        block = self.idx.parent(stmt)
        body = list(block.body)
        replace[stmt] = cst.RemovalSentinel.REMOVE
        remaining = [s for s in body if replace.get(s) is not cst.RemovalSentinel.REMOVE]
        if not remaining:
            raise _Manual("the binding is the only statement left in its block")
        position = {id(s): i for i, s in enumerate(body)}
        if isinstance(block, cst.IndentedBlock) and position[id(stmt)] < position[id(remaining[0])]:
            self._drop_leading_blank_lines(remaining[0], replace)

    def _drop_leading_blank_lines(self, stmt: cst.CSTNode, replace: dict) -> None:
        """The statement that becomes first in its block loses its blank lines (as black does),
        keeping any replacements planned inside it."""
        if not any(line.comment is None for line in stmt.leading_lines):
            return
        kept = list(stmt.leading_lines)
        while kept and kept[0].comment is None:
            kept.pop(0)
        self._with_leading_lines(stmt, kept, replace)

    def _static_decorator(self, dec: cst.Decorator, static: list[str]) -> cst.Decorator:
        d = dec.decorator
        names = ", ".join(self.ctx.literal(n) for n in static) + ("," if len(static) == 1 else "")
        if isinstance(d, cst.Call):  # partial(jax.jit, ...)
            rest = [self._code(a).strip().rstrip(",").strip() for a in d.args[1:]]
            rest = self._merge_static(cst.Call(func=d.args[0].value, args=d.args), rest, static)
            text = f"{self._code(d.func)}({', '.join([self._code(d.args[0].value), *rest])})"
            return dec.with_changes(decorator=cst.parse_expression(text))
        partial_name, imports = self.ctx.names.reference("functools.partial")
        self.imports.extend(imports)
        text = f"{partial_name}({self._code(d)}, static_argnames=({names}))"
        return dec.with_changes(decorator=cst.parse_expression(text))


def _same_import(stmt: cst.CSTNode, earlier: cst.CSTNode, name: str) -> bool:
    """`stmt` binds `name` to the same module or module member as the import `earlier` does."""
    target = imported_by(stmt).get(name)
    return target is not None and target == imported_by(earlier).get(name)


def callee_name_expr(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def append_params(params: list[cst.Param], names: list[str]) -> list[cst.Param]:
    """`params` with `names` appended, in the layout of the list: one per line when the parameters
    are one per line (a trailing comma before the closing parenthesis is kept)."""
    if not names:
        return params
    inline = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    last = params[-1].comma if params else cst.MaybeSentinel.DEFAULT
    multiline = (
        len(params) >= 2
        and isinstance(last, cst.Comma)
        and isinstance(last.whitespace_after, cst.ParenthesizedWhitespace)
        and isinstance(params[0].comma, cst.Comma)
        and isinstance(params[0].comma.whitespace_after, cst.ParenthesizedWhitespace)
    )
    between = params[0].comma if multiline else inline
    out = [*params[:-1], params[-1].with_changes(comma=between)] if params else []
    for i, name in enumerate(names):
        final = i == len(names) - 1
        comma = (last if multiline else cst.MaybeSentinel.DEFAULT) if final else between
        out.append(cst.Param(name=cst.Name(name), comma=comma))
    return out


def _spelled(names: list[str]) -> str:
    """`cfg`, `cfg` and `mode`, `a`, `b` and `c`."""
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def with_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    out = []
    for i, a in enumerate(args):
        comma = (
            cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if i < len(args) - 1 else cst.MaybeSentinel.DEFAULT
        )
        out.append(a.with_changes(comma=comma))
    return out


_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*) = ([^\n#]*)")


def _assignment(ctx: RuleContext, code: str) -> cst.SimpleStatementLine | None:
    """`cst.parse_statement(code)` for a one-line `name = value` (the same tree), the value parsed
    once per file and text: a file of many similar functions hoists the same transform again and
    again (the 50k-line benchmark: 1,225 hoists of one lambda), and a statement parse cost more
    than the rest of a hoist's plan. None for any other code."""
    found = _ASSIGNMENT.fullmatch(code)
    if found is None or found.group(2) != found.group(2).strip():  # spaces around it are the line's
        return None
    memo: dict[str, cst.BaseExpression | None] = ctx.fact(_assignment, lambda ctx: {})
    text = found.group(2)
    if text not in memo:
        try:
            memo[text] = cst.parse_expression(text, config=parsing_config(ctx.module))
        except cst.ParserSyntaxError:
            memo[text] = None
    value = memo[text]
    if value is None:
        return None
    target = cst.AssignTarget(cst.Name(found.group(1)))
    return cst.SimpleStatementLine([cst.Assign(targets=[target], value=value)])
