"""Alias-aware names: what `jnp.where`, `jit` or `cp` really refer to, and how to spell one.

Rules match on qualified names ("jax.jit", "functools.cached_property") instead of
on spelling, so `from jax import jit as J`, `import jax as jx` and `jax.jit` all
match. The same table answers the reverse question for fixes: how does this file
already spell `jax.lax.cond`, and which import would it need otherwise?
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import libcst as cst

from jaxfix.analysis import filememo, render
from jaxfix.analysis.pytrees import IMPORT_ERRORS, dotted, module_imports, qualify
from jaxfix.analysis.transforms import JIT_NAMES, VMAP_NAMES
from jaxfix.analysis.walk import statements, walk
from jaxfix.model import ImportRequest

# Transforms a project's own wrapper function may stand for (see `ImportMap.wrappers`).
WRAPPED_TRANSFORMS = JIT_NAMES | VMAP_NAMES

# How a fix imports a module the file does not import yet: the community's spelling.
PREFERRED_IMPORTS: dict[str, tuple[str, ImportRequest]] = {
    "jax": ("jax", ImportRequest("jax")),
    "jax.numpy": ("jnp", ImportRequest("jax.numpy", alias="jnp")),
    "jax.lax": ("lax", ImportRequest("jax", name="lax")),
    "functools": ("functools", ImportRequest("functools")),
    "flax.struct": ("struct", ImportRequest("flax", name="struct")),
    "equinox": ("eqx", ImportRequest("equinox", alias="eqx")),
    "dataclasses": ("dataclasses", ImportRequest("dataclasses")),
    "typing": ("typing", ImportRequest("typing")),
}


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    kind = type(node)  # concrete classes: `isinstance` would run ABCMeta's check (hot: every qualify)
    if kind is cst.Name:
        return node.value
    if kind is cst.Attribute:
        head = dotted_name(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def stored_root_name(target: cst.BaseExpression) -> str | None:
    """`x` for `x[i]`, `x.a.b`, `x[i].a`: the name whose contents a store into `target` mutates."""
    while isinstance(target, (cst.Subscript, cst.Attribute)):
        target = target.value
    return target.value if isinstance(target, cst.Name) else None


def _module_name(node: cst.BaseExpression | None) -> str | None:
    return None if node is None else dotted_name(node)


_LAST_AST_MAP: list = [None, None]  # (tree, its ImportMap): `ImportMap.from_ast`


@filememo.on_forget
def _forget_import_map() -> None:
    _LAST_AST_MAP[:] = [None, None]


@dataclass
class ImportMap:
    """Local name -> qualified name, from every import statement in the module."""

    bindings: dict[str, str] = field(default_factory=dict)
    requests: dict[str, ImportRequest] = field(default_factory=dict)  # local name -> the import binding it
    _module: cst.Module | None = field(default=None, repr=False, compare=False)
    # module functions that return a transform of their first parameter (`def maybe_jit(fn, *a,
    # **k): return jax.jit(fn, *a, **k)`): bound to that transform, never used to spell one
    wrappers: frozenset[str] = frozenset()
    # local names that imports bind to different modules (`import jax.numpy as np` in one cell,
    # `import numpy as np` in a later one): `bindings` keeps the last, which a reference above it
    # does not mean (ayaka14732/beta-vae-numpyro@5ecfe34, heldout21: its `np.hstack` is jax.numpy's)
    rebound: frozenset[str] = frozenset()
    _used_names: set[str] | None = field(default=None, repr=False, compare=False)
    # the module's `Name` nodes, where its owner keeps an index of them (`RuleContext.tree_index`)
    _name_nodes: Callable[[], Iterable[cst.Name]] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_module(
        cls, module: cst.Module, name_nodes: Callable[[], Iterable[cst.Name]] | None = None
    ) -> "ImportMap":
        """The imports of `module`; `name_nodes`, where the caller keeps an index of the module's
        nodes, lists its `Name` nodes (what `used_names` reads) without a walk of its own."""
        collector = _ImportCollector()
        # imports are statements: no need to enter expressions; one pass for the imports and tries
        imports: list[cst.Import | cst.ImportFrom] = []
        tries: list[cst.Try] = []
        for node in statements(module):
            kind = type(node)  # concrete classes: `isinstance` would run ABCMeta's check per statement
            if kind is cst.Import or kind is cst.ImportFrom:
                imports.append(node)
            elif kind is cst.Try:
                tries.append(node)
        fallbacks = _import_fallbacks(tries)
        for node in imports:
            if node in fallbacks:
                continue
            if type(node) is cst.Import:
                collector.visit_Import(node)
            else:
                collector.visit_ImportFrom(node)
        bindings = collector.bindings
        wrappers = {}
        for node in module.body:
            if isinstance(node, cst.FunctionDef) and len(node.body.body) <= 4 and not node.decorators and _returns_a_call(node):
                try:
                    parsed = ast.parse(textwrap.dedent(render.code_of(module, node))).body[0]
                except SyntaxError:
                    continue
                target = _wrapper_target(parsed, bindings)
                if target is not None:
                    wrappers[node.name.value] = target
        return cls(
            bindings={**bindings, **wrappers},
            requests=collector.requests,
            _module=module,
            _name_nodes=name_nodes,
            wrappers=frozenset(wrappers),
            rebound=frozenset(collector.rebound),
        )

    @classmethod
    def from_ast(cls, tree: ast.Module) -> "ImportMap":
        """The same bindings from the stdlib AST, so `could_match` screens qualify names exactly as
        the rules will (a screen that resolved more or less than the rule could reject a real match).
        The map of the last tree asked about is kept: the screens of several rules ask in turn
        (callers never change it)."""
        if _LAST_AST_MAP[0] is not tree or type(_LAST_AST_MAP[1]) is not cls:
            _LAST_AST_MAP[:] = [tree, cls._from_ast(tree)]
        return _LAST_AST_MAP[1]

    @classmethod
    def _from_ast(cls, tree: ast.Module) -> "ImportMap":
        bindings: dict[str, str] = {}
        rebound: set[str] = set()

        def bind(local: str, target: str) -> None:
            if bindings.get(local, target) != target:
                rebound.add(local)
            bindings[local] = target

        for node in module_imports(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname is not None:
                        bind(alias.asname, alias.name)
                    else:
                        top = alias.name.split(".")[0]
                        bindings.setdefault(top, top)
            elif isinstance(node, ast.ImportFrom):
                if node.level or node.module is None or any(a.name == "*" for a in node.names):
                    continue
                for alias in node.names:
                    bind(alias.asname or alias.name, f"{node.module}.{alias.name}")
        wrappers = {}
        for node in tree.body:
            if type(node) is ast.FunctionDef and len(node.body) <= 4 and not node.decorator_list:
                target = _wrapper_target(node, bindings)
                if target is not None:
                    wrappers[node.name] = target
        return cls(bindings={**bindings, **wrappers}, wrappers=frozenset(wrappers), rebound=frozenset(rebound))

    def qualify_ast(self, node: ast.AST) -> str | None:
        """`qualify` for a stdlib-AST expression."""
        return self._qualify_text(dotted(node))

    @property
    def used_names(self) -> set[str]:
        """Every identifier the module spells; only fixes need it, so it is walked for on demand."""
        if self._used_names is None:
            names: set[str] = set()
            if self._name_nodes is not None:
                names.update(node.value for node in self._name_nodes())
            elif self._module is not None:
                walk(self._module, _NameCollector(names))
            self._used_names = names
        return self._used_names

    def qualify_unambiguous(self, node: cst.BaseExpression) -> str | None:
        """`qualify`, or None when the name `node` starts with is one that imports bind to different
        modules (`rebound`): which one it means depends on where it is read."""
        name = dotted_name(node)
        if name is not None and name.split(".", 1)[0] in self.rebound:
            return None
        return self._qualify_text(name)

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """The qualified name `node` refers to, through imports; None when unknown.

        Names that no import binds come back as themselves (a local `jit` defined in
        the file is just "jit"), so callers compare against fully qualified names.
        """
        return self._qualify_text(dotted_name(node))

    def _qualify_text(self, text: str | None) -> str | None:
        if text is None:
            return None
        head, _, rest = text.partition(".")
        target = self.bindings.get(head)
        if target is None:
            return text
        return f"{target}.{rest}" if rest else target

    def matches(self, node: cst.BaseExpression, qualnames: Iterable[str]) -> bool:
        name = self.qualify(node)
        return name is not None and name in set(qualnames)

    def reference(self, qualname: str) -> tuple[str, tuple[ImportRequest, ...]]:
        """How this file spells `qualname`, plus the import needed when it cannot yet."""
        best: str | None = None
        for local, target in self.bindings.items():
            if local in self.wrappers:
                continue
            if qualname == target:
                spelled = local
            elif qualname.startswith(target + "."):
                spelled = local + qualname[len(target) :]
            else:
                continue
            if best is None or len(spelled) < len(best):
                best = spelled
        if best is not None:
            return best, ()
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            preferred = PREFERRED_IMPORTS.get(module)
            if preferred is None:
                continue
            local, request = preferred
            if local in self.used_names and self.bindings.get(local) != module:
                continue  # the short name means something else here
            return ".".join([local, *parts[cut:]]), (request,)
        top = parts[0]
        return qualname, (ImportRequest(top),)


def _returns_a_call(fn: cst.FunctionDef) -> bool:
    """Does `fn` (nested defs included) have a `return <call>`: what `_wrapper_target` needs at
    least, asked before the def is rendered and parsed again (on a file of thousands of small
    functions, that was most of building the map)."""
    return any(type(node) is cst.Return and isinstance(node.value, cst.Call) for node in statements(fn))


def _wrapper_target(fn: ast.FunctionDef, bindings: dict[str, str]) -> str | None:
    """The transform a project's own wrapper returns of its first parameter, at every return
    (`def maybe_jit(fn, *a, **k): return jit(fn, *a, **k)`), else None: a wrapper that may return
    the function untransformed (`return jax.jit(f) if flag else f`) is not one."""
    params = [*fn.args.posonlyargs, *fn.args.args]
    if not params:
        return None
    first = params[0].arg
    found: set[str] = set()
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return):
            value = node.value
            if not (
                isinstance(value, ast.Call)
                and value.args
                and isinstance(value.args[0], ast.Name)
                and value.args[0].id == first
            ):
                return None
            target = qualify(value.func, bindings)
            if target not in WRAPPED_TRANSFORMS:
                return None
            found.add(target)
        stack.extend(ast.iter_child_nodes(node))
    return found.pop() if len(found) == 1 else None


class _NameCollector(cst.CSTVisitor):
    def __init__(self, names: set[str]) -> None:
        self.names = names

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def _import_fallbacks(tries: Iterable[cst.Try]) -> set[cst.CSTNode]:
    """`pytrees.module_imports`' fallbacks on the libcst tree: the imports of an `except
    ImportError:` handler (of one of the module's `tries`) that only re-bind what the `try` body's
    imports bound."""
    found: set[cst.CSTNode] = set()
    for node in tries:
        bound = _bound_by(n for n in statements(node.body) if isinstance(n, (cst.Import, cst.ImportFrom)))
        for handler in node.handlers:
            kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
            kinds = [k.value if isinstance(k, cst.Element) else k for k in kinds]
            if not any(isinstance(k, cst.Name) and k.value in IMPORT_ERRORS for k in kinds):
                continue
            for stmt in statements(handler.body):
                if isinstance(stmt, (cst.Import, cst.ImportFrom)) and _bound_by([stmt]) <= bound:
                    found.add(stmt)
    return found


def _bound_by(imports: Iterable[cst.CSTNode]) -> set[str]:
    """The local names these import statements bind (`*` for a star import)."""
    names: set[str] = set()
    for node in imports:
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            names.add("*")
            continue
        for alias in node.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                names.add(alias.asname.name.value)
            elif (full := _module_name(alias.name)) is not None:
                names.add(full.split(".")[0] if isinstance(node, cst.Import) else full)
    return names


def imported_by(stmt: cst.CSTNode) -> dict[str, str]:
    """Local name -> qualified name for what the import statements of the simple statement line
    `stmt` bind (`import jax.numpy as jnp`: jnp -> jax.numpy), as the module's `ImportMap` takes
    them; {} for any other statement."""
    collector = _ImportCollector()
    for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
        if isinstance(small, cst.Import):
            collector.visit_Import(small)
        elif isinstance(small, cst.ImportFrom):
            collector.visit_ImportFrom(small)
    return collector.bindings


class _ImportCollector:
    def __init__(self) -> None:
        self.bindings: dict[str, str] = {}
        self.requests: dict[str, ImportRequest] = {}
        self.rebound: set[str] = set()  # `ImportMap.rebound`

    def _bind(self, local: str, target: str) -> None:
        if self.bindings.get(local, target) != target:
            self.rebound.add(local)
        self.bindings[local] = target

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _module_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, full)
                self.requests[alias.asname.name.value] = ImportRequest(full, alias=alias.asname.name.value)
            else:
                top = full.split(".")[0]
                self.bindings.setdefault(top, top)
                self.requests.setdefault(top, ImportRequest(full))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or isinstance(node.names, cst.ImportStar):
            return
        module = _module_name(node.module)
        if module is None:
            return
        for alias in node.names:
            name = _module_name(alias.name)
            if name is None:
                continue
            local, asname = name, None
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = asname = alias.asname.name.value
            self._bind(local, f"{module}.{name}")
            self.requests[local] = ImportRequest(module, name, asname)
