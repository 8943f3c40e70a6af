"""Add and remove the imports fixes asked for, so the file's import block stays as isort keeps it.

A new import joins an existing `from module import ...` line (members in isort's order) or
becomes a statement of its own in the right group of the file's leading import block (stdlib or
third party), sorted as Ruff's I001 expects; libcst's AddImportsVisitor would append it after
the last import. An import a fix removed a use of is dropped only when libcst's scope analysis
finds no other use (RemoveImportsVisitor's test, with `__all__` and string annotations), and the
blank line that separated its group is kept.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable

import libcst as cst

from jaxfix.analysis.cstparse import parse_module, parsing_config
from jaxfix.analysis.names import dotted_name
from jaxfix.model import ImportRequest

_IMPORT = (cst.Import, cst.ImportFrom)


def apply_import_requests(
    text: str, add: Iterable[ImportRequest] = (), remove: Iterable[ImportRequest] = ()
) -> str:
    """`text` with the imports of `add` present and those of `remove` gone where nothing uses them."""
    return remove_unused_imports(add_imports(text, add), remove)


def _split_head(text: str, tree: ast.Module | None = None) -> tuple[str, str]:
    """(head, rest) of `text`: the head holds every module-level import statement and the
    statement after the last of them, and ends at the start of a line where a top-level statement
    begins. Adding and removing imports changes the head alone, so only it is parsed and rendered
    by libcst: on a generated 50,000-line file that is the difference between milliseconds and
    seconds a round (issue #33). The whole text is the head when it cannot be split safely."""
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return text, ""
    body = tree.body
    last = max((i for i, stmt in enumerate(body) if isinstance(stmt, (ast.Import, ast.ImportFrom))), default=-1)
    cut = last + 2  # the first statement left out of the head
    if last < 0 or cut >= len(body):
        return text, ""
    stmt = body[cut]
    first_line = min([stmt.lineno, *(d.lineno - 1 for d in getattr(stmt, "decorator_list", ()))])
    if stmt.col_offset != 0 or (body[cut - 1].end_lineno or first_line) >= first_line:
        return text, ""
    offset = 0
    for _ in range(first_line - 1):
        offset = text.find("\n", offset) + 1
        if offset == 0:
            return text, ""
    # comments and blank lines just above the statement stay with it, in the rest (never a line
    # of the statement before: a string's last line may start with `#`)
    head_lines = text[:offset].splitlines(keepends=True)
    kept = body[cut - 1].end_lineno or len(head_lines)
    while len(head_lines) > kept and (not head_lines[-1].strip() or head_lines[-1].lstrip().startswith("#")):
        offset -= len(head_lines.pop())
    return text[:offset], text[offset:]


# -- adding ---------------------------------------------------------------------------------
def add_imports(text: str, requests: Iterable[ImportRequest]) -> str:
    merged: dict[ImportRequest, ImportRequest] = {}
    for request in requests:  # one per import; `leading` if any asker needs it there
        merged[request] = request if request.leading else merged.get(request, request)
    unique = sorted(merged.values(), key=lambda r: (r.module, r.name or "", r.alias or ""))
    if not unique:
        return text
    head, rest = _split_head(text)
    if rest:
        return add_imports(head, unique) + rest
    module = parse_module(text)
    body = list(module.body)
    for request in unique:
        if _present(body[slice(*_leading_block(body))] if request.leading else body, request):
            continue
        if not _merge(body, request, module):
            _insert(body, request, module)
    return module.with_changes(body=body).code


def _simple_import(stmt: cst.BaseStatement) -> cst.Import | cst.ImportFrom | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], _IMPORT):
        return stmt.body[0]
    return None


def _alias_names(alias: cst.ImportAlias) -> tuple[str | None, str | None]:
    asname = alias.asname.name if alias.asname is not None else None
    return dotted_name(alias.name), (asname.value if isinstance(asname, cst.Name) else None)


def _from_module(node: cst.ImportFrom) -> str | None:
    if node.relative or node.module is None:
        return None
    return dotted_name(node.module)


def _present(body: list[cst.BaseStatement], request: ImportRequest) -> bool:
    for stmt in body:
        node = _simple_import(stmt)
        if isinstance(node, cst.Import) and request.name is None:
            if any(_alias_names(a) == (request.module, request.alias) for a in node.names):
                return True
        elif (
            isinstance(node, cst.ImportFrom)
            and request.name is not None
            and _from_module(node) == request.module
            and not isinstance(node.names, cst.ImportStar)
            and any(_alias_names(a) == (request.name, request.alias) for a in node.names)
        ):
            return True
    return False


def _member_key(name: str) -> tuple[int, str, str]:
    """isort's `order-by-type`: CONSTANTS, then Classes, then the rest, each case-insensitively."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name.lower(), name


def _merge(body: list[cst.BaseStatement], request: ImportRequest, module: cst.Module) -> bool:
    """Add `name` to the file's `from module import ...` line, in isort's member order."""
    if request.name is None or request.alias is not None:
        return False
    for i, stmt in enumerate(body):
        node = _simple_import(stmt)
        if (
            not isinstance(node, cst.ImportFrom)
            or _from_module(node) != request.module
            or isinstance(node.names, cst.ImportStar)
            or any(a.asname is not None for a in node.names)
        ):
            continue
        names = [dotted_name(a.name) or "" for a in node.names]
        names.append(request.name)
        names.sort(key=_member_key)
        one_line = f"from {request.module} import {', '.join(names)}"
        if node.lpar is None and len(one_line) <= 88:
            new = cst.parse_statement(one_line + "\n", config=parsing_config(module))
        else:
            indent = module.default_indent
            rows = "".join(f"{indent}{n},{module.default_newline}" for n in names)
            new = cst.parse_statement(
                f"from {request.module} import ({module.default_newline}{rows})\n", config=parsing_config(module)
            )
        body[i] = new.with_changes(leading_lines=stmt.leading_lines, trailing_whitespace=stmt.trailing_whitespace)
        return True
    return False


def _top(name: str) -> str:
    return name.split(".")[0]


def _section(node: cst.Import | cst.ImportFrom) -> int:
    """0 `__future__`, 1 stdlib, 2 the rest (third party, first party), 3 relative."""
    if isinstance(node, cst.ImportFrom):
        if node.relative:
            return 3
        name = _from_module(node) or ""
    else:
        name = dotted_name(node.names[0].name) or ""
    if name == "__future__":
        return 0
    return 1 if _top(name) in sys.stdlib_module_names else 2


def _sort_key(node: cst.Import | cst.ImportFrom) -> tuple:
    """Ruff's isort order within a section: `import x` lines first, then `from x import`, by module."""
    if isinstance(node, cst.ImportFrom):
        name = _from_module(node) or ""
        return (1, name.lower(), name)
    name, alias = _alias_names(node.names[0])
    return (0, (name or "").lower(), name or "", alias or "")


def _leading_block(body: list[cst.BaseStatement]) -> tuple[int, int]:
    """[start, end) of the import statements at the top (after a docstring)."""
    start = 0
    first = body[0] if body and isinstance(body[0], cst.SimpleStatementLine) else None
    if first is not None and isinstance(first.body[0], cst.Expr):
        start = int(isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
    end = start
    while end < len(body) and _simple_import(body[end]) is not None:
        end += 1
    return start, end


def _insert(body: list[cst.BaseStatement], request: ImportRequest, module: cst.Module) -> None:
    new = cst.parse_statement(request.render() + "\n", config=parsing_config(module))
    node = _simple_import(new)
    section, key = _section(node), _sort_key(node)
    start, end = _leading_block(body)
    blank = [cst.EmptyLine(indent=False)]
    if start == end:  # no import block: the new line starts one, a blank line after it
        if start < len(body) and not any(line.comment is None for line in body[start].leading_lines):
            body[start] = body[start].with_changes(leading_lines=[*blank, *body[start].leading_lines])
        body.insert(start, new.with_changes(leading_lines=blank if start else ()))
        return
    groups: list[list[int]] = []
    for i in range(start, end):
        if i == start or any(line.comment is None for line in body[i].leading_lines):
            groups.append([])
        groups[-1].append(i)
    own = [g for g in groups if any(_section(_simple_import(body[i])) == section for i in g)]
    if own:
        group = own[0]
        for i in group:
            if _sort_key(_simple_import(body[i])) > key:
                if i == group[0]:  # the group's first line: take over its separating lines
                    new = new.with_changes(leading_lines=body[i].leading_lines)
                    body[i] = body[i].with_changes(leading_lines=())
                body.insert(i, new)
                return
        body.insert(group[-1] + 1, new)
        return
    later = [g for g in groups if min(_section(_simple_import(body[i])) for i in g) > section]
    if later:  # a new group before the first group of a later section
        first = later[0][0]
        new = new.with_changes(leading_lines=body[first].leading_lines)
        body[first] = body[first].with_changes(leading_lines=blank)
        body.insert(first, new)
        return
    body.insert(end, new.with_changes(leading_lines=blank))


# -- removing -------------------------------------------------------------------------------
def remove_unused_imports(text: str, requests: Iterable[ImportRequest]) -> str:
    """Drop the module-level imports of `requests` that nothing in `text` uses any more."""
    wanted = set(requests)
    if not wanted:
        return text
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    used, spelled = _loaded_names(tree)
    wanted = {r for r in wanted if _bound_name(r) not in used}  # cheap screen before scope analysis
    if not wanted:
        return text
    head, rest = _split_head(text, tree) if tree is not None else (text, "")
    if rest and not any(_bound_name(r) in spelled for r in wanted):
        # Never loaded, and spelled in no string (`__all__`, a string annotation) nor `global`
        # statement: unused as the scope analysis would find, which then need not run over the
        # whole text; only the head, where the imports are, is parsed and rendered.
        module = parse_module(head)
        unused = {
            alias
            for stmt in module.body
            if (node := _simple_import(stmt)) is not None and not isinstance(node.names, cst.ImportStar)
            for alias in node.names
            if _request_of(node, alias) in wanted
        }
        return _without(module, unused, wanted) + rest
    # imported here: libcst.codemod pulls in libcst.matchers (~0.4 s), and only fixes need it
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import GatherUnusedImportsVisitor
    from libcst.metadata import MetadataWrapper

    module = parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    wrapper.resolve_many(GatherUnusedImportsVisitor.get_inherited_dependencies())
    gather = GatherUnusedImportsVisitor(CodemodContext(wrapper=wrapper))
    wrapper.visit(gather)
    return _without(module, {alias for alias, _ in gather.unused_imports}, wanted)


def _without(module: cst.Module, unused: set, wanted: set[ImportRequest]) -> str:
    """`module`'s code without the import aliases of `unused` that `wanted` asks to remove."""
    body, carried, changed = [], (), False
    for stmt in module.body:
        node = _simple_import(stmt)
        if node is not None and not isinstance(node.names, cst.ImportStar):
            keep = [a for a in node.names if not (a in unused and _request_of(node, a) in wanted)]
            if len(keep) != len(node.names):
                changed = True
                if not keep:
                    carried = (*carried, *stmt.leading_lines)
                    continue
                keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                stmt = stmt.with_changes(body=[node.with_changes(names=keep)])
        if carried or (changed and not body):
            lines = _join_lines(carried, stmt.leading_lines)
            while not body and lines and lines[0].comment is None:  # the file's first line now
                lines = lines[1:]
            stmt = stmt.with_changes(leading_lines=lines)
            carried = ()
        body.append(stmt)
    if not changed:
        return module.code
    return module.with_changes(body=body).code


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _loaded_names(tree: ast.Module | None) -> tuple[set[str], set[str]]:
    """(names the code spells, words of its string constants and `global`/`nonlocal` names)."""
    if tree is None:
        return set(), set()
    names, spelled = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            spelled.update(_WORD.findall(node.value))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            spelled.update(node.names)
    return names, spelled


def _bound_name(request: ImportRequest) -> str:
    return request.alias or request.name or _top(request.module)


def _request_of(node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> ImportRequest | None:
    name, asname = _alias_names(alias)
    if isinstance(node, cst.Import):
        return ImportRequest(name or "", alias=asname)
    module = _from_module(node)
    return None if module is None else ImportRequest(module, name, asname)


def _join_lines(carried: tuple, own: tuple | list) -> list[cst.EmptyLine]:
    """A removed line's leading lines before the next line's, blank runs no longer than either had."""

    def longest(lines) -> int:
        best = run = 0
        for line in lines:
            run = run + 1 if line.comment is None else 0
            best = max(best, run)
        return best

    limit = max(longest(carried), longest(own))
    out, run = [], 0
    for line in (*carried, *own):
        run = run + 1 if line.comment is None else 0
        if run <= limit:
            out.append(line)
    return out
