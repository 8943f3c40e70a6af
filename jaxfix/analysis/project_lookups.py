"""What the project index says about the names a module imports: the facts of other modules of
the checked project that a rule of this one reads (their static fields and static-field helpers,
their timers, their classes' pytree kinds), the project's own packages, and the call graph's entries
into this module. Each lookup is None (or empty) without a project index, so a file checked alone
decides without them.

Names are qualified through the module's imports as the project index names modules (relative
imports included: `module_bindings`), not through `ImportMap`, which does not know the file's place
in its package.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable

import libcst as cst

from jaxfix.analysis import astscan, pytrees
from jaxfix.analysis.bound_jits import assigned_callees, returns_jitted
from jaxfix.analysis.names import dotted_name


def project_class_fields(ctx) -> Callable[[str], frozenset[str]] | None:
    """`JitContexts.class_fields` from the project index (None without one)."""
    qualify = _project_qualifier(ctx)
    if qualify is None:
        return None

    def lookup(written: str) -> frozenset[str]:
        target = qualify(written)
        return frozenset() if target is None else ctx.project.static_fields_of(target)

    return lookup


def project_array_fields(ctx) -> Callable[[str], frozenset[str]] | None:
    """The fields a class the module names is annotated to hold arrays, from the project index
    (None without one): `project.array_fields_of`."""
    return _project_fields(ctx, "array_fields_of")


def project_callable_fields(ctx) -> Callable[[str], frozenset[str]] | None:
    """The fields a class the module names is annotated to hold plain functions, from the project
    index (None without one): `project.callable_fields_of`."""
    return _project_fields(ctx, "callable_fields_of")


def _project_fields(ctx, method: str) -> Callable[[str], frozenset[str]] | None:
    """`ctx.project.<method>` of the class a written name qualifies to (None without an index)."""
    qualify = _project_qualifier(ctx)
    if qualify is None or not hasattr(ctx.project, method):
        return None
    fields_of = getattr(ctx.project, method)

    def lookup(written: str) -> frozenset[str]:
        target = qualify(written)
        return frozenset() if target is None else fields_of(target)

    return lookup


def project_field_helper(ctx) -> Callable[[str], bool] | None:
    """`JitContexts.field_helper` from the project index (None without one): the imported name's
    module makes a static field with it (`pytrees.ModuleSummary.field_helpers`)."""
    return project_member(ctx, "field_helpers")


def project_timer(ctx) -> Callable[[str], bool] | None:
    """JAX501's timers of other modules: the imported name's module defines it as a timer
    (`pytrees.ModuleSummary.timers`, `timers.timer_names`)."""
    return project_member(ctx, "timers")


def project_jitted(ctx) -> Callable[[str], bool] | None:
    """JAX501's jitted functions of other modules: the imported name's module binds it to a jitted
    function at its top level (`pytrees.ModuleSummary.jitted`, `bound_jits.module_jitted_names`)."""
    return project_member(ctx, "jitted")


def project_jit_factory(ctx) -> Callable[[str], bool] | None:
    """JAX501's factories of jitted functions in other modules: the imported name's module defines
    it as a top-level function returning one (`pytrees.ModuleSummary.jit_factories`,
    `bound_jits.returns_jitted`)."""
    return project_member(ctx, "jit_factories")


def project_host_caller(ctx) -> Callable[[str], bool] | None:
    """JAX501's host callbacks of other modules: the imported name's module defines it as a
    top-level function that calls back to the host from compiled code (`pytrees.ModuleSummary.
    host_callers`, `host_callbacks.host_callers`)."""
    return project_member(ctx, "host_callers")


def project_async_returner(ctx) -> Callable[..., bool] | None:
    """JAX501's functions of other modules that return compiled work in flight: the imported name's
    module defines it so (`pytrees.ModuleSummary.async_returners`, `async_returns.async_returners`);
    `lookup(cls, method)` asks the same of a method of an imported class."""
    return project_member(ctx, "async_returners")


def project_jitted_among(lookup: Callable[[str], bool], written: Iterable[str | None], known: set[str]) -> set[str]:
    """The names among `written` (callees as written: `solve`, `mj.center`), not already `known`,
    that `lookup` (`project_jitted`) says another module of the project jits; each asked once. A
    name the module binds itself qualifies to nothing there (relative imports do), so it is never
    taken from another module."""
    found: set[str] = set()
    asked: set[str] = set()
    for name in written:
        if name is None or name in known or name in asked:
            continue
        asked.add(name)
        if lookup(name):
            found.add(name)
    return found


def jit_factories(
    candidates: Iterable[ast.FunctionDef | ast.AsyncFunctionDef],
    tree: ast.Module,
    qualify: Callable[[ast.AST], str | None],
    imported: Callable[[str], bool] | None,
    defined: set[str],
) -> set[str]:
    """The functions whose call returns a jitted function (`bound_jits.returns_jitted`): those of
    `candidates` (the module's own defs the caller trusts), and the callees of the module's
    assignments (`hf = make_solver(...)`) that `imported` (`project_jit_factory`) says another module
    of the project defines as one; a name of `defined` (bound here) is never taken from elsewhere.
    JAX501's `JaxWork` and JAX504's notebook magics both ask this."""
    here = {fn.name for fn in candidates if returns_jitted(fn, qualify)}
    if imported is None:
        return here
    return here | project_jitted_among(imported, sorted(assigned_callees(tree)), here | defined)


def project_member(ctx, member: str) -> Callable[..., bool] | None:
    """A name as written here -> whether its module's summary lists it in `member` (a frozenset
    field of `pytrees.ModuleSummary`), following a package's re-export of it (`from .experiment
    import experiment` in `jaxbandits/__init__.py`, then `from jaxbandits import experiment`:
    StoneT2000/jax-bandits@fcf4fd0 examples/experiment.py:36); None without a project index."""
    qualify = _project_qualifier(ctx)
    if qualify is None:
        return None

    def lookup(written: str, attribute: str | None = None) -> bool:
        """`attribute`: ask for `<name>.<attribute>` of the module that defines `written` (a
        method of its class: `Solver.solve`)."""
        target = qualify(written)
        for _ in range(_RE_EXPORT_HOPS):
            if target is None or "." not in target:
                return False
            module_name, _, name = target.rpartition(".")
            summary = ctx.project.module(module_name)
            if summary is None:
                return False
            if (f"{name}.{attribute}" if attribute else name) in getattr(summary, member):
                return True
            target = summary.bindings.get(name)  # imported there: maybe re-exported
        return False

    return lookup


# how many re-exports a lookup follows (a package's `__init__` importing from a submodule that
# imports from another is two)
_RE_EXPORT_HOPS = 3


def project_class_kind(ctx) -> Callable[[str], str | None] | None:
    """A class name as written here -> its pytree kind (`pytrees.NNX`, ...) when another module of
    the project defines it (`ProjectIndex.kind_of`); None without a project index."""
    qualify = _project_qualifier(ctx)
    if qualify is None:
        return None

    def lookup(written: str) -> str | None:
        target = qualify(written)
        if target is None or "." not in target:
            return None
        found = ctx.project.kind_of(target)
        return None if found is None else found[0]

    return lookup


def _project_qualifier(ctx) -> Callable[[str], str | None] | None:
    """A name as written in this module -> its qualified name through the module's imports,
    relative ones included, as the project index names modules; None without a project index."""
    project = getattr(ctx, "project", None)
    if project is None or not hasattr(project, "static_fields_of"):
        return None
    bindings: dict[str, str] | None = None

    def qualify(written: str) -> str | None:
        nonlocal bindings
        if bindings is None:
            module_name, is_package = project.module_for_path(ctx.path)
            bindings = pytrees.module_bindings(ctx.tree, module_name, is_package)
        head, _, rest = written.partition(".")
        target = bindings.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    return qualify


def own_packages(ctx) -> frozenset[str]:
    """The top-level packages of the checked project (none without a project index)."""
    project = getattr(ctx, "project", None)
    if project is None or not hasattr(project, "top_packages"):
        return frozenset()
    return project.top_packages()


def cross_entries(ctx) -> dict:
    """What the project's call graph says other modules make traced in this file ({} without one)."""
    project = getattr(ctx, "project", None)
    if project is None or not hasattr(project, "cross_entries"):
        return {}
    name, _ = project.module_for_path(ctx.path)
    return project.cross_entries(name)


def attribute_read(ctx, name: str) -> bool:
    """Whether code may read attribute `name` (`obj.name`, `getattr(obj, "name")`, `hasattr`): in this module
    (a notebook is no module of the index) or, with the project index, in any module of the project
    (`ProjectIndex.reads_attribute`). True without a project index: a file checked alone cannot
    tell."""
    project = ctx.project
    if project is None:
        return True
    if name in ctx.fact(_attributes_read_here, _attributes_read_here):
        return True
    try:
        return project.reads_attribute(name)
    except Exception:  # noqa: BLE001 - an index that cannot answer decides nothing
        return True


def name_used(ctx, name: str) -> bool:
    """Whether code may use the module-level name `name` other than where it is bound: this
    module loads it (or names it in a string, as `__all__` does), or, with the project index and
    the whole tree, another module of the project mentions it (`ProjectIndex.references_outside`).
    True without a project index: a file checked alone cannot tell who imports it."""
    if name in ctx.fact(_names_used_here, _names_used_here):
        return True
    project = ctx.project
    if project is None or not hasattr(project, "references_outside"):
        return True
    try:
        return project.references_outside(name, ctx.path)
    except Exception:  # noqa: BLE001 - an index that cannot answer decides nothing
        return True


def _names_used_here(ctx) -> frozenset[str]:
    """The names this module loads, the identifiers its string constants spell (`__all__`), and the
    words of its IPython magics, which a notebook hands the rules commented out (`# %timeit
    f_jit(x)` calls `f_jit`)."""
    found: set[str] = set()
    for node in astscan.nodes(ctx.tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            found.add(node.value)
    for line in _MAGIC_LINE.findall(ctx.source):
        found.update(_IDENTIFIER.findall(line))
    return frozenset(found)


_MAGIC_LINE = re.compile(r"^[ \t]*#[^\S\n]?%.*$", re.MULTILINE)  # `# %timeit f(x)`, `# %%time`: jupytext's magics
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def _attributes_read_here(ctx) -> frozenset[str]:
    """The attribute names this module reads (`obj.name` loaded, the string given to `getattr` or
    `hasattr`), listed in one walk per file: `attribute_read` is asked per cached member and per
    stored jit, and walking the tree per question was quadratic on a large file."""
    found: set[str] = set()
    for node in astscan.nodes(ctx.tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            found.add(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            found.update(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return frozenset(found)


# builtins that wrap a def for a class body without calling it (`f = staticmethod(f)`)
_DEF_WRAPPERS = frozenset({"staticmethod", "classmethod", "property"})


def calls_project_code(ctx, idx, call) -> bool:
    """`call` calls code of the checked project: a def or class of this module (`idx`, its
    `ScopeIndex`, knows them), a name imported from one of the project's modules
    (`train_utils.get_model`, `jaxns.warnings.deprecated`), or a builtin that wraps a def without
    calling it. A callable handed to such a call goes to code the project wrote, which on the
    blind pools called it once (a set-up helper taking a model factory, a registry of one-shot
    diagnostics, a deprecation alias); one handed to a library (`scipy.optimize.minimize`) or to
    an object's method (`window.reg_key_handler`) is a driver's callback. Imports are read only
    with a project index; a module's own defs always."""
    written = dotted_name(call.func)
    if written is None:
        return False
    head = written.partition(".")[0]
    own = idx.scope_info(ctx.module).bindings.get(head, [])
    if written in _DEF_WRAPPERS or any(isinstance(b, (cst.FunctionDef, cst.ClassDef)) for b in own):
        return True
    qualify = _project_qualifier(ctx)
    target = qualify(written) if qualify is not None else None
    if target is None or "." not in target:
        return False
    return target.partition(".")[0] in own_packages(ctx) or ctx.project.module(target.rpartition(".")[0]) is not None
