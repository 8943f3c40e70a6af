"""The shape of the code base: one rule per module, and imports that run one way only.

Layering, bottom to top: `jaxfix.analysis` <- `codemods` <- the engine <- front ends. A module
may import (at module level) only modules of its own layer or below, and no set of modules
imports itself in a circle. Imports inside functions are deliberate late bindings (optional
dependencies, the libcst command bridge) and are not counted.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from jaxfix.engine import registry
from jaxfix.rulebase import Rule

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("jaxfix", "codemods")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if "_bootstrap" in path.parts or "_recorder" in path.parts:
                continue  # run as sitecustomize in a child, never imported by jaxfix
            found[_module_name(path)] = path
    return found


def _top_level_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of this project imported by statements outside any function, TYPE_CHECKING included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                out.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                out.add(base)
                out.update(f"{base}.{alias.name}" for alias in child.names)
            visit(child)

    visit(tree)
    return {m for m in out if m in known and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _top_level_imports(name, path, set(modules)) for name, path in modules.items()}


def test_every_rule_module_holds_one_rule_with_one_code():
    registry.all_rules()
    problems = []
    for name, path in _modules().items():
        if not name.startswith("codemods."):
            continue
        module = importlib.import_module(name)
        rules = [
            v for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Rule) and v is not Rule and v.__module__ == name
        ]
        if len(rules) > 1:
            problems.append(f"{name}: {len(rules)} rule classes")
        for rule in rules:
            if len(rule.codes) != 1:
                problems.append(f"{name}: {rule.__name__} reports {len(rule.codes)} codes")
            elif path.stem != rule.codes[0].name.replace("-", "_"):
                problems.append(f"{name}: holds {rule.codes[0].code} but is not named {rule.codes[0].name.replace('-', '_')}.py")
            elif not (module.__doc__ or "").lstrip().startswith(rule.codes[0].code):
                problems.append(f"{name}: its docstring does not start with {rule.codes[0].code}")
    assert not problems, "\n".join(problems)


def test_no_import_cycles():
    graph = _graph()
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


# Bottom to top. A module's layer is that of the longest prefix listed; the package `jaxfix`
# itself (its version) and the data vocabulary (`model`, `edits`) sit with the analysis.
LAYERS = {
    "jaxfix": 0,
    "jaxfix.model": 0,
    "jaxfix.edits": 0,
    "jaxfix.analysis": 0,
    "jaxfix.rulebase": 1,
    "jaxfix.rewriting": 2,
    "codemods": 3,
    "jaxfix.engine": 4,
}
FRONT_ENDS = 5


def _layer(module: str) -> int:
    best, layer = -1, FRONT_ENDS
    for prefix, number in LAYERS.items():
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
            best, layer = len(prefix), number
    if best == len("jaxfix") and module != "jaxfix":
        return FRONT_ENDS  # cli, batch, lsp, verify, explain, report, ...
    return layer


def test_imports_run_down_the_layers():
    upward = [
        f"{module} (layer {_layer(module)}) imports {target} (layer {_layer(target)})"
        for module, targets in _graph().items()
        for target in sorted(targets)
        if _layer(target) > _layer(module)
    ]
    assert not upward, "\n".join(upward)
