"""A module's statements and import bindings, on the stdlib AST: every statement without entering
expressions (`ast_statements`, kept for the module last asked about by `module_statements`), its
imports (`module_imports`, leaving out the fallbacks of an `except ImportError:`), the names they
bind (`module_bindings`, `bindings_of`), and a dotted name qualified through them (`dotted`,
`qualify`). Read by the pytree summaries (`pytrees`, which re-exports these for its importers),
the import map (`names.ImportMap`), the call graph and the screens.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from jaxfix.analysis import astscan, filememo


def dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


# (tree, its body list, `ast_statements(tree.body)`, the imports among them or None until asked)
_LAST_STATEMENTS: list = [None, None, (), None]


@filememo.on_forget
def _forget_statements() -> None:
    _LAST_STATEMENTS[:] = [None, None, (), None]


def module_statements(tree: ast.Module) -> Sequence[ast.stmt]:
    """`ast_statements(tree.body)` as a tuple, kept until another module is asked about: the call
    graph, the import map, the pytree summary and several screens list a file's statements one
    after the other (the tree must not change in between; none changes it)."""
    last = _LAST_STATEMENTS
    if last[0] is not tree or last[1] is not tree.body:
        last[:] = [tree, tree.body, tuple(ast_statements(tree.body)), None]
    return last[2]


def module_imports(tree: ast.Module) -> Sequence[ast.Import | ast.ImportFrom]:
    """The import statements of `module_statements(tree)`, in its order, kept with them: the import
    map (`ImportMap.from_ast`) and each `module_bindings` read them in turn."""
    statements = module_statements(tree)
    last = _LAST_STATEMENTS
    if last[3] is None:
        Import, ImportFrom = ast.Import, ast.ImportFrom
        fallbacks = _import_fallbacks(statements)
        last[3] = tuple(
            node for node in statements if (type(node) is Import or type(node) is ImportFrom) and node not in fallbacks
        )
    return last[3]


IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def _import_fallbacks(statements: Sequence[ast.stmt]) -> set[ast.stmt]:
    """The imports in an `except ImportError:` handler that only re-bind what the `try` body's
    imports bound: `try: import jax.numpy as jnp` / `except ImportError: import numpy as jnp`
    (a library that runs without JAX) binds `jnp` to JAX's NumPy wherever JAX is installed, which
    is wherever a trace happens (imewei/xpcsjax@b810d85 `core/jax_backend.py`: 19 JAX402 false
    alarms on `jnp.clip` and friends in jitted code, 16 with safe fixes)."""
    found: set[ast.stmt] = set()
    for node in statements:
        if type(node) is not ast.Try:
            continue
        bound = _import_names(n for n in ast_statements(node.body) if type(n) in (ast.Import, ast.ImportFrom))
        for handler in node.handlers:
            if _catches_import_error(handler.type):
                for stmt in ast_statements(handler.body):
                    if type(stmt) in (ast.Import, ast.ImportFrom) and _import_names([stmt]) <= bound:
                        found.add(stmt)
    return found


def _import_names(imports) -> set[str]:
    names: set[str] = set()
    for node in imports:
        for alias in node.names:
            names.add(alias.asname or alias.name.split(".")[0])
    return names


def _catches_import_error(kind: ast.expr | None) -> bool:
    kinds = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(isinstance(k, ast.Name) and k.id in IMPORT_ERRORS for k in kinds)


def module_bindings(tree: ast.Module, module_name: str | None = None, is_package: bool = False) -> dict[str, str]:
    """Local name -> qualified name for every import in the module (relative ones too, given its name)."""
    return bindings_of(module_imports(tree), module_name, is_package)


_BLOCKS = astscan.BLOCKS_LAST_FIRST  # reversed: pushed on a stack


class _Blocks(dict):
    """node type -> (whether it is a statement, the fields of `_BLOCKS` it has, in that order)."""

    def __missing__(self, node_type: type) -> tuple[bool, tuple[str, ...]]:
        fields = getattr(node_type, "_fields", ())
        self[node_type] = found = (issubclass(node_type, ast.stmt), tuple(f for f in _BLOCKS if f in fields))
        return found


_BLOCKS_OF = _Blocks()


def ast_statements(nodes: list) -> list[ast.stmt]:
    """Every statement in `nodes` and nested in their bodies (`body`, `orelse`, `finalbody`, the
    handlers' and the cases' bodies), in source order, without entering expressions (a fraction of
    `ast.walk`'s cost when only statements matter). Iterative, with the block fields and the
    statement test looked up once per node type (half the time of asking each node for all five)."""
    found: list[ast.stmt] = []
    append = found.append
    stack = list(reversed(nodes))
    pop, extend, blocks_of = stack.pop, stack.extend, _BLOCKS_OF
    while stack:
        node = pop()
        is_statement, blocks = blocks_of[type(node)]
        if is_statement:
            append(node)
        for name in blocks:
            inner = getattr(node, name, None)
            if type(inner) is list and inner:
                extend(reversed(inner))
    return found


def bindings_of(
    statements: Sequence[ast.stmt], module_name: str | None = None, is_package: bool = False
) -> dict[str, str]:
    """`module_bindings` from the module's statements (`ast_statements`), for a caller that has
    them already: the imports among them, in order."""
    bindings: dict[str, str] = {}
    for node in statements:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bindings[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bindings.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                if module_name is None:
                    continue
                parts = module_name.split(".")
                keep = len(parts) - node.level + (1 if is_package else 0)
                if keep < 0:
                    continue
                base = ".".join([*parts[:keep], *([node.module] if node.module else [])])
            for alias in node.names:
                if alias.name == "*":
                    continue
                bindings[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
    return bindings


def qualify(node: ast.AST, bindings: dict[str, str]) -> str | None:
    text = dotted(node)
    if text is None:
        return None
    head, _, rest = text.partition(".")
    target = bindings.get(head)
    if target is None:
        return text
    return f"{target}.{rest}" if rest else target
