"""A whole checked tree, summarised: module name -> its classes, their bases, and its imports.

Built with the stdlib `ast` only (no libcst, no imports of user code), and picklable so it can
travel to a process pool. Rules reach it as `ctx.project`; `jaxfix.analysis.pytrees` uses it to
see that a class deriving from `mypkg.base.Model` is a pytree because `Model` subclasses
`flax.struct.PyTreeNode` in another file.

`jaxfix check` builds it lazily and learns the call graph's roots from the checks themselves: each
worker tells, from the tree it parsed for its own file anyway, whether a transform enters one of
the module's functions (`module_facts`), so no file is parsed twice for the index; only the
modules the propagation reaches from those roots are summarised besides.
"""

from __future__ import annotations

import ast
import hashlib
import os
import pickle
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jaxfix.analysis.pytrees import (
    REGISTERED,
    ModuleSummary,
    class_kind,
    inherited_kind,
    registers_subclasses,
    registrar,
    summarize,
    summary_of,
)
from jaxfix.engine.cache import content_digest, load_for_this_code, store_for_this_code

if TYPE_CHECKING:
    from jaxfix.analysis.callgraph import CallSummary, CrossEntry

# The call graph's analyses (`callgraph`, `trace_screen`) import libcst's side of the analysis:
# they are imported where a module is summarised, so that a run answered from the cache never does.

# A summary-store record of a module without trace entries whose summaries were not made
# (`module_facts`): all the call graph needs to know of it unless the propagation reaches it.
NO_ENTRIES: tuple[None, None] = (None, None)


def module_name_for(path: str | os.PathLike, packages: dict[str, list[str]] | None = None) -> tuple[str, bool]:
    """(dotted module name, is_package) from the file's place among `__init__.py` packages.
    `packages` (folder -> its dotted package parts) saves the walk up for files of one folder."""
    return _module_name(str(Path(path).resolve()), {} if packages is None else packages)


def _module_name(real: str, packages: dict[str, list[str]]) -> tuple[str, bool]:
    """`module_name_for` of an already resolved path (a string: a cached check names every file)."""
    folder, name = os.path.split(real)
    stem = os.path.splitext(name)[0]  # `Path.stem`
    is_package = name == "__init__.py"
    parts = [*_package_parts(folder, packages)]
    if not is_package:
        parts.append(stem)
    return ".".join(parts) or stem, is_package


def _package_parts(folder: str, packages: dict[str, list[str]]) -> list[str]:
    """The dotted parts of the package `folder` is, walking up while each folder has an
    `__init__.py` and a name an import can spell: a checkout folder named `JAX-DIPS` with an
    `__init__.py` of its own is no package (`import JAX-DIPS` is a syntax error), so its
    `jax_dips/utils/inspect.py` is `jax_dips.utils.inspect`, as the project's own imports name it
    (JAX-DIPS/JAX-DIPS@<heldout27>, whose trainers import `progress_bar` from it)."""
    found = packages.get(folder)
    if found is None:
        if os.path.basename(folder).isidentifier() and os.path.isfile(os.path.join(folder, "__init__.py")):
            parent = os.path.dirname(folder)
            found = ([] if parent == folder else _package_parts(parent, packages)) + [os.path.basename(folder)]
        else:
            found = []
        packages[folder] = found
    return found


def _at_path(path: Path, parts: list[str]) -> bool:
    """Is `path` the file of the module `parts` (`a/b/c.py` or `a/b/c/__init__.py`)?"""
    stem = path.parent if path.name == "__init__.py" else path.with_suffix("")
    return list(stem.parts[-len(parts) :]) == parts


@dataclass
class ProjectIndex:
    modules: dict[str, ModuleSummary] = field(default_factory=dict)
    paths: dict[str, tuple[str, bool]] = field(default_factory=dict)  # resolved path -> (module, is_package)
    given: dict[str, tuple[str, bool]] = field(default_factory=dict)  # path as given -> (module, is_package)
    errors: dict[str, str] = field(default_factory=dict)  # path -> why it was left out
    # lazy index: module -> (path, is_package) of files not summarised yet (see `module`)
    pending: dict[str, tuple[str, bool]] = field(default_factory=dict)
    # each module's calls and trace entries (`jaxfix.analysis.callgraph`); not in `fingerprint`
    calls: dict[str, CallSummary] = field(default_factory=dict)
    # module -> function -> how traced code of another module enters it (`cross_entries`)
    _entered: dict[str, dict[str, CrossEntry]] | None = None
    _no_entries: set[str] = field(default_factory=set)  # pending modules known to have no trace entry
    # module -> (path, is_package) of modules summarised without their calls (`module`), until asked
    _uncalled: dict[str, tuple[str, bool]] = field(default_factory=dict)
    generation: int = 0  # bumped by `refresh` (what the editor's analyses key on)
    _top: frozenset[str] | None = None  # `top_packages`, computed once
    # names `module` was asked about while this is a dict (what a cached result depends on)
    consulted: dict[str, None] | None = None
    _aliases: dict[str, str | None] = field(default_factory=dict)  # `_canonical`'s answers
    _referenced: tuple[int, dict[str, bool]] | None = None  # (generation, name -> answer): `references`
    # built from folders (`jaxfix check .`, an editor's workspace), not from a list of files
    # (pre-commit's changed files): only then may a name no module references be taken as unused
    whole_tree: bool = False

    def module(self, name: str) -> ModuleSummary | None:
        """The summary of module `name`, parsing its file now if the index is lazy."""
        if self.consulted is not None:
            self.consulted[name] = None
        name = self._canonical(name)
        found = self.modules.get(name)
        if found is None and name in self.pending:
            self._load(name, calls=False)
            found = self.modules.get(name)
        return found

    def call_summary(self, name: str) -> CallSummary | None:
        """The calls and trace entries of module `name` (parsed now if the index is lazy)."""
        name = self._canonical(name)
        found = self.calls.get(name)
        if found is None:
            if self.consulted is not None:
                self.consulted[name] = None
            if name in self.pending or name in self._uncalled:
                self._load(name, calls=True)
                found = self.calls.get(name)
        return found

    def _load(self, name: str, *, calls: bool) -> None:
        """Parse the file of module `name` (pending, or summarised without its calls) and keep its
        summary and, with `calls`, its call summary: a pytree question (`kind_of`, asked in every
        worker) needs only the first, and the call summary costs as much again."""
        path, is_package = self.pending.pop(name, None) or self._uncalled.pop(name)
        # a call summary here serves the propagation: each function's calls found when it is reached
        summary, error = _summarize_one((path, name, is_package, None, None), calls=calls, lazy=True)
        if summary is None:
            self.errors[path] = error
            self.paths.pop(str(Path(path).resolve()), None)
            return
        self.modules[name] = summary[0]
        if calls:
            self.calls[name] = summary[1]
        else:
            self._uncalled[name] = (path, is_package)

    def _canonical(self, name: str) -> str:
        """`name` as this index knows the module. A folder without `__init__.py` is a namespace
        package to Python (`from mypkg.model import f` works from the folder above `mypkg`), but
        no file says where such a package starts, so `mypkg/model.py` is indexed as `model`:
        a dotted name the index does not know is matched to a module named by its tail whose
        file sits at the matching path (`.../mypkg/model.py`)."""
        if name in self.modules or name in self.pending or name in self.calls or "." not in name:
            return name
        if name not in self._aliases:
            parts = name.split(".")
            found = None
            for cut in range(1, len(parts)):
                tail = ".".join(parts[cut:])
                if tail in self.modules or tail in self.pending or tail in self.calls:
                    where = [Path(p) for p, (n, _) in self.paths.items() if n == tail]
                    if len(where) == 1 and _at_path(where[0], parts):
                        found = tail
                    break
            self._aliases[name] = found
        return self._aliases[name] or name

    def learn(self, name: str, record: tuple[ModuleSummary, CallSummary] | tuple[None, None]) -> None:
        """What a check found out about module `name` (`module_facts`, or a summary-store record):
        its summaries, or `NO_ENTRIES`. Propagation then needs to parse nothing to find roots."""
        if name in self.calls or (name not in self.pending and name not in self._uncalled):
            return  # summarised already, or not a module of this index
        if record[0] is None:
            self._no_entries.add(name)
        else:
            self.modules[name], self.calls[name] = record
            self.pending.pop(name, None)
            self._uncalled.pop(name, None)

    def record(self, name: str) -> tuple[ModuleSummary, CallSummary] | tuple[None, None] | None:
        """What the summary store should keep of module `name`: its summaries, `NO_ENTRIES`, or
        None when this index knows neither."""
        if name in self.modules and name in self.calls:
            return self.modules[name], self.calls[name]
        return NO_ENTRIES if name in self._no_entries else None

    def assume_entries(self, entered: dict[str, dict[str, CrossEntry]]) -> None:
        """Answer `cross_entries` from `entered`, computed elsewhere (a worker of `jaxfix check`
        is told its file's entries by the process that propagated them), not by propagating here."""
        self._entered = entered

    def entered_modules(self) -> dict[str, dict[str, CrossEntry]]:
        """Every module traced code of another module enters, with how (`cross_entries` of each)."""
        self.cross_entries(None)
        return dict(self._entered or {})

    def cross_entries(self, module_name: str | None) -> dict[str, CrossEntry]:
        """Functions of `module_name` ("f", "Cls.m") that traced code of another module of the
        project calls with traced arguments: which parameters, and why (for messages).

        Computed once for the whole project, from the modules that may name a jax transform (a
        lazy index reads only those and the modules their traced code calls)."""
        if self._entered is None:
            from jaxfix.analysis.callgraph import propagate

            self._entered = propagate(self.call_summary, self._trace_roots(), is_pytree=self._is_pytree)
        return self._entered.get(module_name or "", {})

    def entries_digest(self, path: str | os.PathLike) -> str:
        """A digest of what other modules make traced in the file at `path` (what its cached result
        is checked against: an edit elsewhere that changes it must not reuse that result)."""
        name, _ = self.module_for_path(path)
        return entries_digest(self.cross_entries(name))

    def refresh(self, path: str | os.PathLike) -> None:
        """Summarise the file at `path` again (the editor saved it), or drop it if it is gone."""
        resolved = Path(path).resolve()
        name, is_package = self.paths.get(str(resolved)) or _module_name(str(resolved), {})
        self.modules.pop(name, None)
        self.calls.pop(name, None)
        self._uncalled.pop(name, None)
        self._no_entries.discard(name)
        self.given.pop(str(path), None)
        if resolved.is_file() and resolved.suffix in (".py", ".pyi"):
            self.paths[str(resolved)] = (name, is_package)
            self.given[str(path)] = (name, is_package)
            self.pending[name] = (str(path), is_package)
        else:
            self.paths.pop(str(resolved), None)
            self.pending.pop(name, None)
        self._entered = None
        self._top = None
        self.generation += 1

    def _trace_roots(self) -> list[str]:
        roots = [name for name, calls in self.calls.items() if calls.has_entries]
        for name, (path, _) in [*self.pending.items(), *self._uncalled.items()]:
            if name in self._no_entries:
                continue
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if not may_be_root(text, path):
                self._no_entries.add(name)
            else:
                calls = self.call_summary(name)
                if calls is not None and calls.has_entries:
                    roots.append(name)
        return sorted(roots)

    def references(self, name: str) -> bool:
        """Whether a module of the project (its tests included: a public method that only tests call
        is still API) mentions `name` in code: a call (`obj.name(...)`), a callback handed on
        (`run(self.name)`); not its `def`, a comment or a doctest line (`>>> model.name()`), but
        prose in a docstring or a string counts (what the text cannot rule out). Searched in the files' text, not parsed: parsing every module for
        this cost a fifth of a whole check of a 960-file project. The answer depends on every
        module, each recorded as consulted. Without the whole tree (`whole_tree`), or in a tree of
        one module (an editor's single-file workspace, which shows no other module), every name may
        be referenced."""
        return self._mentioned(name, rf"\b{re.escape(name)}\b")

    def references_outside(self, name: str, path: str) -> bool:
        """`references`, in the modules of the project other than the one at `path` (whose own uses
        its caller reads from its tree): whether another module may use a name that module binds."""
        return self._mentioned(f"{name}@{path}", rf"\b{re.escape(name)}\b", skip=path)

    def reads_attribute(self, name: str) -> bool:
        """Whether a module of the project reads an attribute `name` in code (`.name`, or the
        string `"name"` given to `getattr`/`hasattr`): what `references` answers for an attribute, with the
        same whole-tree rule (without the whole tree every attribute may be read) and the same
        text search. A plain store (`self.name = ...`) is no read. A JAX101 cached property nothing
        reads is never first read under a trace; a jitted function stored where nothing reads it is
        never called."""
        return self._mentioned(
            f".{name}", rf"\.{re.escape(name)}\b(?!\s*=[^=])|(?:get|has)attr\([^)]*['\"]{re.escape(name)}['\"]"
        )

    def _mentioned(self, key: str, pattern: str, skip: str | None = None) -> bool:
        """Whether `pattern` matches in the code (not a comment or string) of some module of the
        project (but the one at `skip`), memoised under `key` per index generation; True without
        the whole tree (a module not checked may mention it)."""
        files = [(module, path) for path, (module, _) in self.paths.items()]
        if not self.whole_tree or len(files) < 2:
            return True
        if skip is not None:
            skipped = str(Path(skip).resolve())  # `paths` is keyed by resolved path
            files = [(module, path) for module, path in files if path != skipped]
        if self.consulted is not None:
            self.consulted.update((module, None) for module, _ in files)
        if self._referenced is None or self._referenced[0] != self.generation:
            self._referenced = (self.generation, {})
        known = self._referenced[1]
        if key not in known:
            mention = re.compile(pattern)
            known[key] = False
            for _, path in files:
                try:
                    text = Path(path).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if any(_in_code(text, found.start()) for found in mention.finditer(text)):
                    known[key] = True
                    break
        return known[key]

    def _is_pytree(self, qualname: str) -> bool:
        return self.kind_of(qualname) is not None

    def complete(self) -> "ProjectIndex":
        """Summarise every pending module (what answers about the whole project need)."""
        for name in list(self.pending):
            self.module(name)
        return self

    def fingerprint(self) -> str:
        """A digest of the facts, stable across runs and processes (part of every cache key).

        It changes when a module's classes, bases or imports change, not when a function
        body is edited, so editing one file does not invalidate every cached result.
        """
        self.complete()
        facts = repr((sorted(self.modules.items()), sorted(self.paths.items())))
        return hashlib.sha256(facts.encode()).hexdigest()[:16]

    def top_packages(self) -> frozenset[str]:
        """The top-level packages (folders with `__init__.py`) the project's files belong to."""
        if self._top is None:
            self._top = frozenset(name.split(".", 1)[0] for name, is_pkg in self.paths.values() if "." in name or is_pkg)
        return self._top

    def module_for_path(self, path: str | os.PathLike) -> tuple[str | None, bool]:
        known = self.given.get(path) if isinstance(path, str) else None
        if known is not None:  # a path as the index was given it: asked once per checked file
            return known
        key = str(Path(path).resolve())
        if key in self.paths:
            return self.paths[key]
        return module_name_for(path)

    def kind_of(
        self, qualname: str, _seen: frozenset = frozenset(), *, inherited_only: bool = False
    ) -> tuple[str, str] | None:
        """(kind, via) of the class `qualname` ("pkg.mod.Class") if the project defines a pytree by that name.

        With `inherited_only`, only what a subclass inherits (PyTreeNode / eqx.Module chains).
        """
        module_name, _, cls_name = qualname.rpartition(".")
        module = self.module(module_name)
        if module is None:
            return None
        if cls_name in module.classes:
            cls = module.classes[cls_name]
            if inherited_only and registers_subclasses(module, cls, self, _seen):
                return REGISTERED, qualname  # its `__init_subclass__` registers each subclass
            how = inherited_kind if inherited_only else class_kind
            return how(module, cls, self, _seen)
        target = module.bindings.get(cls_name)  # a re-export: `from .base import Model`
        if target is not None and target != qualname and (module_name, cls_name) not in _seen:
            return self.kind_of(target, _seen | {(module_name, cls_name)}, inherited_only=inherited_only)
        return None

    def registrar(self, qualname: str, _seen: frozenset = frozenset()) -> str | None:
        """`pytrees.registrar` for the function `qualname` ("pkg.mod.register") of the project."""
        module_name, _, name = qualname.rpartition(".")
        module = self.module(module_name)
        if module is None:
            return None
        if name in module.helpers:
            return registrar(module, name, self, _seen)
        target = module.bindings.get(name)  # a re-export: `from .struct import register`
        if target is not None and target != qualname and (module_name, name) not in _seen:
            return self.registrar(target, _seen | {(module_name, name)})
        return None

    def static_fields_of(self, qualname: str) -> frozenset[str]:
        """Fields of the project class `qualname` that hold Python data (`dense: bool`,
        `eqx.field(static=True)`), its bases' included; empty for a class the project does not define."""
        return self._fields_of(qualname, "static_fields", frozenset())

    def array_fields_of(self, qualname: str) -> frozenset[str]:
        """Fields of the project class `qualname` annotated with an array type (`ts: jax.Array |
        None`), its bases' included; empty for a class the project does not define."""
        return self._fields_of(qualname, "array_fields", frozenset())

    def callable_fields_of(self, qualname: str) -> frozenset[str]:
        """Fields of the project class `qualname` annotated to hold a plain function (`step:
        Callable[...]`), its bases' included; empty for a class the project does not define."""
        return self._fields_of(qualname, "callable_fields", frozenset())

    def _fields_of(self, qualname: str, member: str, seen: frozenset) -> frozenset[str]:
        """`ClassSummary.<member>` of the class `qualname` and of its bases, through re-exports."""
        module_name, _, cls_name = qualname.rpartition(".")
        if (module_name, cls_name) in seen:
            return frozenset()
        seen = seen | {(module_name, cls_name)}
        module = self.module(module_name)
        if module is None:
            return frozenset()
        cls = module.classes.get(cls_name)
        if cls is None:
            target = module.bindings.get(cls_name)  # a re-export: `from ._saveat import SaveAt`
            return self._fields_of(target, member, seen) if target is not None and target != qualname else frozenset()
        out = set(getattr(cls, member))
        for base in cls.bases:
            out |= self._fields_of(base if "." in base else f"{module_name}.{base}", member, seen)
        return frozenset(out)

    def pytree_classes(self) -> dict[str, tuple[str, str]]:
        """Every pytree class the project defines: qualified name -> (kind, via)."""
        out = {}
        for name, module in self.complete().modules.items():
            for cls in module.classes.values():
                found = class_kind(module, cls, self)
                if found is not None:
                    out[f"{name}.{cls.name}"] = found
        return out


def _in_code(text: str, at: int) -> bool:
    """The mention at offset `at` is not its own `def`, nor in a comment or a doctest line."""
    line = text[text.rfind("\n", 0, at) + 1 : at]
    head = line.lstrip()
    return "#" not in line and not head.startswith((">>>", "...")) and not re.fullmatch(r"(async\s+)?def\s+", head)


def build_project_index(
    paths: list[str],
    *,
    cache_dir: str | os.PathLike | None = None,
    workers: int = 1,
    lazy: bool = False,
    resolved: list[Path] | None = None,
) -> ProjectIndex:
    """Summarise every Python file in `paths` (files; folders are not walked: pass discovered files).

    Summaries are kept in `cache_dir` keyed by each file's bytes, so a second run over an
    unchanged tree parses nothing (summarising the 855-file jax/flax/optax corpus costs
    ~10 s of CPU); the files that do need summarising are spread over `workers` processes.

    With `lazy`, nothing is read yet: a module is parsed when a rule first asks about it
    (`module`), in whichever process asks; `jaxfix check` takes this path (`jaxfix.engine.runner`).
    `resolved`, when given, is each path resolved (discovery has them: resolving costs a system
    call per path component).
    """
    index = ProjectIndex()
    packages: dict[str, list[str]] = {}
    if lazy:
        for i, raw in enumerate(paths):
            if resolved is not None:  # discovery's paths: no path object to build
                if os.path.splitext(raw)[1] not in (".py", ".pyi"):
                    continue
                real, given = str(resolved[i]), raw
            else:
                path = Path(raw)
                if path.suffix not in (".py", ".pyi"):
                    continue
                real, given = str(path.resolve()), str(path)
            name, is_package = _module_name(real, packages)
            index.paths[real] = (name, is_package)
            index.given[given] = (name, is_package)
            index.pending.setdefault(name, (given, is_package))
        return index
    store = _SummaryStore(cache_dir)
    wanted: list[tuple[str, str, bool, bytes]] = []  # path, key, is_package, bytes
    for raw in paths:
        path = Path(raw)
        if path.suffix not in (".py", ".pyi"):
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            index.errors[str(path)] = f"{type(exc).__name__}: {exc}"
            continue
        resolved = str(path.resolve())
        name, is_package = _module_name(resolved, packages)
        index.paths[resolved] = (name, is_package)
        index.given[str(path)] = (name, is_package)
        key = summary_key(name, is_package, content_digest(data))
        summary = store.get(key)
        if summary is not None and summary[0] is not None:
            index.modules[name], index.calls[name] = summary
        else:
            wanted.append((str(path), name, is_package, data, key))
    if len(wanted) >= _POOL_THRESHOLD and workers > 1:
        from jaxfix.engine.runner import process_pool

        with process_pool(workers) as pool:
            made = list(pool.map(_summarize_one, wanted, chunksize=max(1, len(wanted) // (workers * 4))))
    else:
        made = [_summarize_one(item) for item in wanted]
    for (path, name, _, _, key), (summary, error) in zip(wanted, made):
        if summary is None:
            index.errors[path] = error
            index.paths.pop(str(Path(path).resolve()), None)
            continue
        index.modules[name], index.calls[name] = summary
        store.put(key, summary)
    store.save()
    return index


_POOL_THRESHOLD = 64


def summary_key(name: str, is_package: bool, digest: str) -> str:
    """A module's key in the summary store: its name, whether it is a package, its bytes' digest."""
    return hashlib.sha256(f"{name}\0{int(is_package)}\0{digest}".encode()).hexdigest()


def may_be_root(source: str, path: str, encoding: str = "utf-8", known: bool | None = None) -> bool:
    """The text test `ProjectIndex.cross_entries` applies before it parses a file to find roots
    (on the file's bytes decoded as UTF-8): a text it rejects names no transform, so no function
    of its module is entered from it (`module_facts` is `NO_ENTRIES` without a parse). `known`:
    the answer for the file's bytes, when the caller has it (`runner._root_test`)."""
    from jaxfix.analysis.trace_screen import MAY_NAME_A_TRANSFORM
    from jaxfix.rulebase import pattern_found, pattern_known

    text = source if encoding in ("utf-8", "utf-8-sig") else None
    if text is not None and known is not None:
        pattern_known(MAY_NAME_A_TRANSFORM, text, known)  # the rules' text tests search it too
        return known
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = source
    return pattern_found(MAY_NAME_A_TRANSFORM, text)  # the rules' prefilters searched this text already


def module_facts(
    source: str, tree: ast.Module, name: str, is_package: bool, path: str, encoding: str = "utf-8"
) -> tuple[ModuleSummary, CallSummary] | tuple[None, None]:
    """A store record for the module of `source` (parsed as `tree`): its summaries if a transform
    enters one of its functions (a root of the call graph), else `NO_ENTRIES`.

    The same answer `ProjectIndex.cross_entries` reaches by parsing the file itself: the text test
    first (`may_be_root`), then the entries alone, which cost a third of the whole call summary."""
    from jaxfix.analysis.callgraph import summarize_calls

    if not may_be_root(source, path, encoding):
        return NO_ENTRIES
    entries = summarize_calls(tree, name, path, is_package, calls=False)
    if not entries.has_entries:
        return NO_ENTRIES
    return summary_of(tree, name, is_package), summarize_calls(tree, name, path, is_package, entries_of=entries)


def _summarize_one(
    item, calls: bool = True, lazy: bool = False
) -> tuple[tuple[ModuleSummary, CallSummary | None] | None, str]:
    """(the module's summary, and with `calls` its call summary), or None and why it failed.
    `lazy`: the call summary finds each function's calls when it is looked up (`summarize_calls`)."""
    from jaxfix.analysis.callgraph import summarize_calls

    path, name, is_package, data, _ = item
    try:
        text = Path(path).read_bytes() if data is None else data
        tree = ast.parse(text, filename=path)
        made = summarize_calls(tree, name, path, is_package, lazy=lazy, text=text if lazy else None) if calls else None
        return (summarize(tree, name, is_package), made), ""
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


class _SummaryStore:
    """Module summaries by content key in one pickle under the cache folder; any problem is a miss."""

    FILE = "project-summaries.pickle"

    def __init__(self, folder: str | os.PathLike | None) -> None:
        self._path = Path(folder) / self.FILE if folder is not None else None
        self._old: dict[str, tuple[ModuleSummary, CallSummary]] = {}
        self._new: dict[str, tuple[ModuleSummary, CallSummary]] = {}
        if self._path is not None:
            summaries = load_for_this_code(self._path)
            if isinstance(summaries, dict):
                self._old = summaries

    def get(self, key: str) -> tuple[ModuleSummary, CallSummary] | None:
        summary = self._old.get(key)
        if summary is not None:
            self._new[key] = summary
        return summary

    def put(self, key: str, summary: tuple[ModuleSummary, CallSummary]) -> None:
        self._new[key] = summary

    def save(self) -> None:
        """Keep exactly the summaries of this run's files (so the store never grows without bound)."""
        if self._path is None or self._new.keys() == self._old.keys():
            return
        store_for_this_code(self._path, self._new)


def entries_digest(entries: dict | None) -> str:
    """A digest of what other modules' traced code makes traced in one module (`cross_entries`)."""
    if not entries:
        return ""
    facts = repr(sorted((k, sorted(v.traced), v.reason) for k, v in entries.items()))
    return hashlib.sha256(facts.encode()).hexdigest()[:12]


class Entered:
    """The modules traced code of another module enters: per module, the digest of its entries
    (`entries_digest`, what cached results are checked against) and the entries themselves, kept
    pickled until a file of that module is analysed again (unpickling them imports the analyses)."""

    def __init__(self, digests: dict[str, str], packed: dict[str, bytes]) -> None:
        self.digests = digests
        self._packed = packed
        self._entries: dict[str, dict] = {}

    @classmethod
    def of(cls, entered: dict[str, dict[str, CrossEntry]]) -> "Entered":
        made = cls({k: entries_digest(v) for k, v in entered.items()}, {})
        made._entries = dict(entered)
        return made

    def digest(self, module: str | None) -> str:
        return self.digests.get(module or "", "")

    def entries(self, module: str | None) -> dict | None:
        name = module or ""
        if name not in self._entries and name in self._packed:
            self._entries[name] = pickle.loads(self._packed[name])
        return self._entries.get(name)

    def packed(self) -> tuple[dict[str, str], dict[str, bytes]]:
        packed = dict(self._packed)
        for name, found in self._entries.items():
            packed.setdefault(name, pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))
        return dict(self.digests), packed


class EntriesStore:
    """The propagation's answer (`Entered`) for the last few trees checked, by a digest of every
    module's name and file: an unchanged tree needs no call graph at all."""

    FILE = "project-entries.pickle"
    KEEP = 8

    def __init__(self, folder: str | os.PathLike) -> None:
        self._path = Path(folder) / self.FILE
        known = load_for_this_code(self._path)
        self._known: dict[str, tuple[dict[str, str], dict[str, bytes]]] = known if isinstance(known, dict) else {}

    @staticmethod
    def tree_digest(modules: dict[str, tuple[str, str]]) -> str:
        """The digest of a tree: module -> (path as given, digest of the file and package flag)."""
        return hashlib.sha256(repr(sorted(modules.items())).encode()).hexdigest()

    def get(self, tree: str) -> Entered | None:
        found = self._known.get(tree)
        return None if found is None else Entered(*found)

    def put(self, tree: str, entered: Entered) -> None:
        known = {k: v for k, v in self._known.items() if k != tree}
        known = dict(list(known.items())[-(self.KEEP - 1) :])
        known[tree] = entered.packed()
        self._known = known
        store_for_this_code(self._path, known)
