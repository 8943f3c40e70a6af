"""Which changes of tree structure a rewrite makes on purpose: the class fields it adds, and the
cached properties it removes.

JAX101's opt-in `cache-style = "field"` fix adds a registered `_<name>_cache` field (None until
`with_caches()` fills it), so every tree that holds such an instance, a gradient with respect to
it included, gains a leaf. That leaf is the fix, not a defect: outputs are compared on the
original's leaves and the added one is named in the evidence. The fields are read from the two
texts (annotated or assigned names in a class body that only the rewrite has), never guessed from
the outputs, so a rewrite that changes structure in any other way still mismatches.
"""

from __future__ import annotations

import ast


def _classes(source: str) -> list[tuple[str, ast.ClassDef]]:
    """Every class of `source` nested in classes only, named dotted by nesting (`Outer.Inner`)."""
    found: list[tuple[str, ast.ClassDef]] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                found.append((prefix + node.name, node))
                walk(node.body, prefix + node.name + ".")

    walk(ast.parse(source).body, "")
    return found


def _class_fields(source: str) -> dict[str, set[str]]:
    """Per class (dotted by nesting): the names its body annotates or assigns."""
    found: dict[str, set[str]] = {}
    for name, node in _classes(source):
        names = found.setdefault(name, set())
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                names.add(stmt.target.id)
            elif isinstance(stmt, ast.Assign):
                names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return found


def added_fields(original: str, rewritten: str) -> frozenset[str]:
    """Names of fields that classes of `rewritten` declare and the same classes of `original` do not."""
    try:
        before, after = _class_fields(original), _class_fields(rewritten)
    except SyntaxError:
        return frozenset()
    added: set[str] = set()
    for cls, names in after.items():
        if cls in before:
            added.update(names - before[cls])
    return frozenset(added)


def uncached_classes(original: str, rewritten: str) -> frozenset[str]:
    """Names of classes a method of which is decorated with a `cached_property` (any spelling
    ending so, or an alias the rewrite turned into `property`) in `original` and not in `rewritten`.

    equinox keeps a filled `cached_property` in the instance's static data, so the original's tree
    structure changes once the property is read (`CustomNode(Model[(Missing, 1.0)])` becomes
    `CustomNode(Model[((Missing, ... ), 1.0)])`) and the rewrite's does not: that change of the
    node's data is the defect JAX101 removes, not one the fix makes."""
    try:
        before, after = _decorated(original), _decorated(rewritten)
    except SyntaxError:
        return frozenset()
    out: set[str] = set()
    for (cls, method), decorators in before.items():
        now = after.get((cls, method), ())
        gone = [d for d in decorators if d not in now]
        if any(d.endswith("cached_property") for d in gone) or (gone and "property" in now):
            out.add(cls.rpartition(".")[2])
    return frozenset(out)


def _decorated(source: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """(class, method) -> its decorators' source text, for the methods of every class."""
    return {
        (name, stmt.name): tuple(ast.unparse(d) for d in stmt.decorator_list)
        for name, node in _classes(source)
        for stmt in node.body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
