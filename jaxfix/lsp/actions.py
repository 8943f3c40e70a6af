"""Code actions: the quick fix of one finding, `# noqa: CODE`, and fix-all.

Every action is a list of minimal `TextEdit`s against the document as the
client has it, never a whole-document replacement, so the cursor, folds and
undo history survive. The fix's own edits are sent as they are; the imports it
requests (added, or dropped once unused) are computed by
`jaxfix.engine.imports.apply_import_requests` on the fixed text and sent as edits of their own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from lsprotocol import types

from jaxfix.edits import apply_edits, edits_between
from jaxfix.engine.imports import apply_import_requests
from jaxfix.engine.noqa import add_noqa
from jaxfix.lsp.positions import LineIndex
from jaxfix.model import Edit, Finding, Fix, Safety

FIX_ALL_KIND = "source.fixAll.jaxfix"
QUICKFIX = types.CodeActionKind.QuickFix


def _map_back(position: int, fix_edits: Sequence[Edit]) -> int | None:
    """The offset in the original text of `position` in the text after `fix_edits`.

    None when the position lies strictly inside text that a fix edit wrote.
    """
    shift = 0
    for edit in fix_edits:
        new_start = edit.start + shift
        new_end = new_start + len(edit.text)
        if position <= new_start:
            break
        if position < new_end:
            return None
        if position == new_end:
            return edit.end
        shift += len(edit.text) - (edit.end - edit.start)
    return position - shift


def fix_edits(source: str, fix: Fix) -> tuple[Edit, ...]:
    """The edits, as offsets into `source`, that apply `fix` and add the imports it needs."""
    own = tuple(sorted(fix.edits, key=lambda e: (e.start, e.end)))
    if not fix.imports and not fix.unused_imports:
        return own
    fixed = apply_edits(source, own)
    with_imports = apply_import_requests(fixed, fix.imports, fix.unused_imports)
    extra: list[Edit] = []
    for edit in edits_between(fixed, with_imports):
        start, end = _map_back(edit.start, own), _map_back(edit.end, own)
        clashes = (
            start is None
            or end is None
            or any(start < e.end and e.start < end or start == e.start or end == e.end for e in own)
        )
        if clashes:
            # An import edit ran into the fix's own text: fall back to one diff of the whole change.
            return edits_between(source, with_imports)
        extra.append(Edit(start, end, edit.text))
    return tuple(sorted((*own, *extra), key=lambda e: (e.start, e.end)))


def text_edits(index: LineIndex, edits: Iterable[Edit]) -> list[types.TextEdit]:
    return [types.TextEdit(range=index.range_of_offsets(e.start, e.end), new_text=e.text) for e in edits]


def noqa_edit(source: str, finding: Finding, index: LineIndex) -> Edit | None:
    """The edit that adds `finding.code` to a `# noqa` on the finding's line, or None if none can.

    The text comes from `jaxfix.engine.noqa.add_noqa` (what `jaxfix check --add-noqa` writes: merged
    into an existing code list, never inside a multi-line string); the edit sent is only the
    part of that line that changes, and it must leave the file parsing.
    """
    line_no = finding.line - 1
    if not 0 <= line_no < index.line_count:
        return None
    new, added, _ = add_noqa(source, [finding])
    if not added or new == source:
        return None
    prefix = 0
    limit = min(len(source), len(new))
    while prefix < limit and source[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and source[len(source) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    edit = Edit(prefix, len(source) - suffix, new[prefix : len(new) - suffix])
    line_start, line_end = index.starts[line_no], index.ends[line_no]
    if not line_start <= edit.start <= edit.end <= line_end:
        return None  # the comment would land on another line than the diagnostic
    try:
        ast.parse(new)
    except (SyntaxError, ValueError):
        return None  # e.g. a line continued with a backslash cannot take a comment
    return edit


def fix_title(finding: Finding) -> str:
    fix = finding.fix
    assert fix is not None
    suffix = " (unsafe)" if fix.safety is Safety.UNSAFE else ""
    return f"{finding.code}: {fix.title}{suffix}"


def workspace_edit(
    uri: str, version: int | None, edits: list[types.TextEdit], document_changes: bool
) -> types.WorkspaceEdit:
    if document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                    edits=edits,
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: edits})


def quick_fix_action(
    uri: str,
    version: int | None,
    source: str,
    index: LineIndex,
    diagnostic: types.Diagnostic,
    finding: Finding,
    document_changes: bool,
) -> types.CodeAction | None:
    fix = finding.fix
    if fix is None or not fix.applicable:
        return None
    edits = text_edits(index, fix_edits(source, fix))
    return types.CodeAction(
        title=fix_title(finding),
        kind=QUICKFIX,
        diagnostics=[diagnostic],
        is_preferred=fix.safety is Safety.SAFE,
        edit=workspace_edit(uri, version, edits, document_changes),
    )


def noqa_action(
    uri: str,
    version: int | None,
    source: str,
    index: LineIndex,
    diagnostic: types.Diagnostic,
    finding: Finding,
    document_changes: bool,
) -> types.CodeAction | None:
    edit = noqa_edit(source, finding, index)
    if edit is None:
        return None
    return types.CodeAction(
        title=f"{finding.code}: suppress with `# noqa: {finding.code}`",
        kind=QUICKFIX,
        diagnostics=[diagnostic],
        edit=workspace_edit(uri, version, text_edits(index, [edit]), document_changes),
    )


def fix_all_action(
    uri: str, version: int | None, source: str, fixed: str | None, index: LineIndex, document_changes: bool
) -> types.CodeAction | None:
    if fixed is None or fixed == source:
        return None
    edits = text_edits(index, edits_between(source, fixed))
    return types.CodeAction(
        title="jaxfix: fix all safely fixable problems",
        kind=FIX_ALL_KIND,
        edit=workspace_edit(uri, version, edits, document_changes),
    )
