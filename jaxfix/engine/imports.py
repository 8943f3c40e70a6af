"""Add the imports fixes asked for, in the style the file already uses.

libcst's AddImportsVisitor merges `from jax import lax` into an existing
`from jax import ...` line and skips imports that are already present.
"""

from __future__ import annotations

from collections.abc import Iterable

from jaxfix.analysis.cstparse import parse_module
from jaxfix.model import ImportRequest


def add_imports(text: str, requests: Iterable[ImportRequest]) -> str:
    unique = sorted(set(requests), key=lambda r: (r.module, r.name or "", r.alias or ""))
    if not unique:
        return text
    # imported here: libcst.codemod pulls in libcst.matchers (~0.4 s), and only fixes need it
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, ImportItem

    items = [ImportItem(r.module, r.name, r.alias) for r in unique]
    module = parse_module(text)
    new_module = AddImportsVisitor(CodemodContext(), items).transform_module(module)
    return new_module.code
