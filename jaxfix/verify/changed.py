"""Which callables a fix changed: functions, methods and properties reachable from the module.

Works on the two texts (original and fixed), not on edit offsets, because the fix loop applies
fixes in rounds whose offsets point into intermediate texts. A callable is changed when its
definition (decorators included) differs between the two ASTs; a nested function's change shows
as a change of the outermost callable that reaches it. Module-level statements that changed
(a hoisted `_f_jit = jax.jit(f)`, a rewritten loop at top level) are reported separately: they
run at import, and only a drive can exercise them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from jaxfix.model import Finding

PROPERTY_DECORATORS = {"property", "cached_property", "functools.cached_property"}


@dataclass(frozen=True)
class Param:
    name: str
    annotation: str | None  # source text
    default: str | None  # source text
    kind: str  # "positional" | "keyword" | "var"
    # how the body uses an unannotated parameter, for guessed inputs: "array:N" (indexed with N
    # indices, or its .shape read), "int" (a loop bound or an index), or ""
    use: str = ""


@dataclass(frozen=True)
class CallableInfo:
    qualname: str  # "f", "Model.loss"
    kind: str  # function | method | staticmethod | classmethod | property
    start_line: int  # first decorator line
    end_line: int
    params: tuple[Param, ...] = ()
    dump: str = field(default="", compare=False, repr=False)

    @property
    def class_name(self) -> str | None:
        return self.qualname.rpartition(".")[0] or None


@dataclass(frozen=True)
class Change:
    qualname: str
    kind: str
    status: str  # "changed" | "added" | "removed"
    original: CallableInfo | None
    rewritten: CallableInfo | None

    @property
    def info(self) -> CallableInfo:
        return self.original or self.rewritten  # type: ignore[return-value]


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        try:
            names.append(ast.unparse(target))
        except Exception:  # pragma: no cover - unparse handles every expression
            names.append("")
    return names


def _kind(node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> str | None:
    names = _decorator_names(node)
    if not in_class:
        return "function"
    if any(n in PROPERTY_DECORATORS or n.endswith(".cached_property") for n in names):
        return "property"
    if any(n.endswith((".setter", ".deleter")) for n in names):
        return None  # part of a property defined above
    if "staticmethod" in names:
        return "staticmethod"
    if "classmethod" in names:
        return "classmethod"
    return "method"


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef, kind: str) -> tuple[Param, ...]:
    a = node.args
    text = lambda n: None if n is None else ast.unparse(n)  # noqa: E731
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    uses = parameter_uses(node)
    params = [Param(p.arg, text(p.annotation), text(d), "positional", uses.get(p.arg, "")) for p, d in zip(positional, defaults)]
    if kind == "classmethod" and params:
        params = params[1:]
    params += [Param(p.arg, text(p.annotation), text(d), "keyword", uses.get(p.arg, "")) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.vararg:
        params.append(Param(a.vararg.arg, text(a.vararg.annotation), None, "var"))
    if a.kwarg:
        params.append(Param(a.kwarg.arg, text(a.kwarg.annotation), None, "var"))
    return tuple(params)


_ARRAY_ATTRIBUTES = frozenset({"shape", "ndim", "T", "at", "dtype", "size", "reshape", "sum", "mean"})
_BOUNDS = frozenset({"range", "fori_loop"})


def parameter_uses(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """How the body uses each parameter that is never rebound: indexed (`x[i, j]`: "array:2"),
    an array attribute read (`x.shape`: "array:1"), or a loop bound / index / integer arithmetic
    (`range(n)`, `fori_loop(0, n, ...)`, `x[n]`, `n % 2`, `n // 2`: "int"). Guessed inputs follow it: an int counter is not
    given 1.5, and an indexed parameter gets an array with as many dimensions."""
    names = {p.arg for p in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
    uses: dict[str, str] = {}

    def array(name: str, ndim: int) -> None:
        known = uses.get(name, "")
        if known.startswith("array:"):
            ndim = max(ndim, int(known.partition(":")[2]))
        uses[name] = f"array:{ndim}"

    for n in ast.walk(node):
        if isinstance(n, ast.Subscript):
            if isinstance(n.value, ast.Name) and n.value.id in names:
                index = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
                array(n.value.id, sum(1 for i in index if not (isinstance(i, ast.Constant) and i.value in (None, Ellipsis))))
            for i in (n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]):
                if isinstance(i, ast.Name) and i.id in names and i.id not in uses:
                    uses[i.id] = "int"
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in names:
            if n.attr in _ARRAY_ATTRIBUTES:
                array(n.value.id, 2 if n.attr == "T" else 1)  # a transpose reads as a matrix
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod | ast.FloorDiv):
            # `n % 2`, `n // 2`: integer arithmetic (a float would change a loop carry's dtype)
            if isinstance(n.left, ast.Name) and n.left.id in names and not uses.get(n.left.id, "").startswith("array"):
                uses[n.left.id] = "int"
        elif isinstance(n, ast.Call):
            func = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            if func in _BOUNDS:
                for arg in n.args[:2] if func == "fori_loop" else n.args:
                    if isinstance(arg, ast.Name) and arg.id in names and not uses.get(arg.id, "").startswith("array"):
                        uses[arg.id] = "int"
    return uses


def callables(source: str) -> dict[str, CallableInfo]:
    """Every function, method and property reachable by attribute access from the module."""
    found: dict[str, CallableInfo] = {}

    def walk(body: Iterable[ast.stmt], prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.", True)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                kind = _kind(node, in_class)
                qualname = prefix + node.name
                if kind is None:  # a setter: fold it into the property's dump
                    if qualname in found:
                        old = found[qualname]
                        found[qualname] = CallableInfo(
                            old.qualname, old.kind, old.start_line, node.end_lineno or old.end_line,
                            old.params, old.dump + ast.dump(node),
                        )
                    continue
                start = min([d.lineno for d in node.decorator_list] + [node.lineno])
                found[qualname] = CallableInfo(
                    qualname, kind, start, node.end_lineno or node.lineno, _params(node, kind), ast.dump(node)
                )
            elif isinstance(node, ast.If | ast.Try):  # `if TYPE_CHECKING:` / try-import blocks
                for part in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                    walk(part, prefix, in_class)

    walk(ast.parse(source).body, "", False)
    return found


def _module_level(source: str) -> list[str]:
    """Dumps of top-level statements that are neither definitions nor imports."""
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom):
            continue
        out.append(ast.dump(node))
    return out


def _class_level(source: str) -> dict[str, str]:
    """Per class: the dump of its body without methods (fields, decorators, bases)."""
    out: dict[str, str] = {}

    def walk(body: Iterable[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                rest = [n for n in node.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
                out[prefix + node.name] = ast.dump(
                    ast.Module(body=rest, type_ignores=[])
                ) + "".join(ast.dump(d) for d in node.decorator_list) + "".join(ast.dump(b) for b in node.bases)
                walk(node.body, f"{prefix}{node.name}.")

    walk(ast.parse(source).body, "")
    return out


@dataclass
class ChangeSet:
    callables: list[Change]
    module_level_changed: bool
    classes_changed: list[str]
    original: dict[str, CallableInfo]

    def enclosing(self, line: int) -> CallableInfo | None:
        """The callable of the original whose definition covers `line` (innermost by span)."""
        best = None
        for info in self.original.values():
            if info.start_line <= line <= info.end_line:
                if best is None or info.end_line - info.start_line < best.end_line - best.start_line:
                    best = info
        return best


def changed_callables(original: str, rewritten: str) -> ChangeSet:
    before, after = callables(original), callables(rewritten)
    changes = []
    for name, info in before.items():
        new = after.get(name)
        if new is None:
            changes.append(Change(name, info.kind, "removed", info, None))
        elif new.dump != info.dump:
            changes.append(Change(name, new.kind if new.kind == "property" else info.kind, "changed", info, new))
    for name, info in after.items():
        if name not in before and not name.rpartition(".")[2].startswith("_"):
            changes.append(Change(name, info.kind, "added", None, info))
    classes_before, classes_after = _class_level(original), _class_level(rewritten)
    classes = sorted(n for n in classes_before if classes_before[n] != classes_after.get(n))
    return ChangeSet(
        callables=changes,
        module_level_changed=_module_level(original) != _module_level(rewritten),
        classes_changed=classes,
        original=before,
    )


def family_of(finding: Finding) -> tuple[str, str]:
    """(rule family = the rule's module name, verify_reference) for a finding's code."""
    from jaxfix.engine import registry

    found = registry.find_code(finding.code)
    if found is None:
        return "unknown", "as-written"
    rule, _ = found
    return rule.__module__.rpartition(".")[2], getattr(rule, "verify_reference", "as-written")


def units_for_finding(finding: Finding, changes: ChangeSet) -> list[str]:
    """The changed callables a fix is answerable for: the one around its finding, else all."""
    changed = {c.qualname for c in changes.callables if c.status != "added"}
    around = changes.enclosing(finding.line)
    while around is not None and around.qualname not in changed and "." in around.qualname:
        # a method of a class whose other parts changed: fall back to everything below
        around = None
    if around is not None and around.qualname in changed:
        owner = around.class_name
        if owner and finding.code in CLASS_WIDE_FIXES:
            # the fix rewrites the class (every cached property, one `with_caches()`): it answers
            # for each property it changed, not only the one it was reported on
            kinds = {c.qualname: c.kind for c in changes.callables}
            return sorted(name for name in changed if name.rpartition(".")[0] == owner and kinds.get(name) == "property")
        return [around.qualname]
    return sorted(changed)


CLASS_WIDE_FIXES = frozenset({"JAX101"})  # fixes that rewrite the whole class of their finding
