"""Which arm of each `if` an input took, from the lines the original ran eagerly.

A control-flow fix is only as well verified as the branches its inputs reached: "equals the
original on 6 inputs" means little if all six took the same arm. The eager reference run records
the line numbers it executed per input, with how often each ran (`child`), and this module maps
them onto the `if` statements of the changed callable in the original text: each arm counts its
executions (an `if` in a loop that took the false arm 117 times and the true arm never is "only the
false branch", however many body lines ran once).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Arms:
    """One `if` statement of the original: its line and the lines of its two arms."""

    line: int
    body: frozenset[int]
    orelse: frozenset[int]
    first: int = 0  # the body's first line: it runs once each time the true arm is taken
    loop_first: bool = False  # ... unless it is a loop header, which runs once per trip

    def taken(self, lines: Iterable[int]) -> str | None:
        """'true', 'false' or None (the `if` was not reached) for one input's executed lines."""
        lines = set(lines)
        if self.line not in lines:
            return None
        return "true" if self.body & lines else "false"


def _lines(statements: list[ast.stmt]) -> frozenset[int]:
    out: set[int] = set()
    for stmt in statements:
        out.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return frozenset(out)


def _find(body: list[ast.stmt], parts: list[str]) -> ast.AST | None:
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.name == parts[0]:
            return node if len(parts) == 1 else _find(node.body, parts[1:])
        if isinstance(node, ast.If | ast.Try):  # definitions under `if TYPE_CHECKING:` / try-import
            for part in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                found = _find(part, parts)
                if found is not None:
                    return found
    return None


def arms_of(source: str, qualname: str) -> list[Arms]:
    """Every `if` statement inside the callable `qualname` of `source` (empty when not found)."""
    try:
        node = _find(ast.parse(source).body, qualname.split("."))
    except SyntaxError:
        return []
    if node is None:
        return []
    return [
        Arms(n.lineno, _lines(n.body), _lines(n.orelse), n.body[0].lineno, isinstance(n.body[0], ast.For | ast.While | ast.AsyncFor))
        for n in ast.walk(node)
        if isinstance(n, ast.If)
    ]


def coverage(arms: list[Arms], lines_per_input: dict[str, Iterable[int]]) -> dict[int, dict[str, int]]:
    """Per `if` line: how many times its true and its false arm ran, over all inputs. With lines
    given as a set (no counts), each input counts once for the arm it took."""
    counts: dict[int, dict[str, int]] = {a.line: {"true": 0, "false": 0} for a in arms}
    for lines in lines_per_input.values():
        if isinstance(lines, Mapping):
            for arm in arms:
                ran = int(lines.get(arm.line, 0))
                true = min(int(lines.get(arm.first, 0)), ran)
                if arm.loop_first and true:
                    true = min(true, 1)  # a loop header counts trips: the arm was entered at least once
                counts[arm.line]["true"] += true
                counts[arm.line]["false"] += ran - true
            continue
        lines = set(lines)
        for arm in arms:
            taken = arm.taken(lines)
            if taken is not None:
                counts[arm.line][taken] += 1
    return counts


def describe(counts: dict[int, dict[str, int]]) -> str:
    """'both branches', or which `if` kept to one arm."""
    if not counts:
        return ""
    reached = {line: c for line, c in counts.items() if c["true"] or c["false"]}
    if not reached:
        return "no input reached the `if`"
    one_sided = [(line, "true" if c["true"] else "false") for line, c in sorted(reached.items()) if not (c["true"] and c["false"])]
    if not one_sided:
        return "both branches" if len(reached) == 1 else f"both branches of each of {len(reached)} `if`s"
    return "; ".join(f"only the {arm} branch of the `if` at line {line}" for line, arm in one_sided)
