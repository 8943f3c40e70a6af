"""A whole checked tree, summarised: module name -> its classes, their bases, and its imports.

Built once, before files are analysed, with the stdlib `ast` only (no libcst, no
imports of user code), and picklable so it can travel to a process pool. Rules
reach it as `ctx.project`; `jaxfix.analysis.pytrees` uses it to see that a class
deriving from `mypkg.base.Model` is a pytree because `Model` subclasses
`flax.struct.PyTreeNode` in another file.
"""

from __future__ import annotations

import ast
import hashlib
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path

from jaxfix.analysis.pytrees import ModuleSummary, class_kind, inherited_kind, summarize
from jaxfix.engine.cache import code_fingerprint, store_pickle


def module_name_for(path: str | os.PathLike, packages: dict[Path, list[str]] | None = None) -> tuple[str, bool]:
    """(dotted module name, is_package) from the file's place among `__init__.py` packages.
    `packages` (folder -> its dotted package parts) saves the walk up for files of one folder."""
    return _module_name(Path(path).resolve(), {} if packages is None else packages)


def _module_name(p: Path, packages: dict[Path, list[str]]) -> tuple[str, bool]:
    """`module_name_for` of an already resolved path."""
    is_package = p.name == "__init__.py"
    parts = [*_package_parts(p.parent, packages)]
    if not is_package:
        parts.append(p.stem)
    return ".".join(parts) or p.stem, is_package


def _package_parts(folder: Path, packages: dict[Path, list[str]]) -> list[str]:
    found = packages.get(folder)
    if found is None:
        if (folder / "__init__.py").is_file():
            found = ([] if folder.parent == folder else _package_parts(folder.parent, packages)) + [folder.name]
        else:
            found = []
        packages[folder] = found
    return found


@dataclass
class ProjectIndex:
    modules: dict[str, ModuleSummary] = field(default_factory=dict)
    paths: dict[str, tuple[str, bool]] = field(default_factory=dict)  # resolved path -> (module, is_package)
    errors: dict[str, str] = field(default_factory=dict)  # path -> why it was left out
    # lazy index: module -> (path, is_package) of files not summarised yet (see `module`)
    pending: dict[str, tuple[str, bool]] = field(default_factory=dict)

    def module(self, name: str) -> ModuleSummary | None:
        """The summary of module `name`, parsing its file now if the index is lazy."""
        found = self.modules.get(name)
        if found is None and name in self.pending:
            path, is_package = self.pending.pop(name)
            summary, error = _summarize_one((path, name, is_package, None, None))
            if summary is None:
                self.errors[path] = error
                self.paths.pop(str(Path(path).resolve()), None)
            else:
                self.modules[name] = found = summary
        return found

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

    def module_for_path(self, path: str | os.PathLike) -> tuple[str | None, bool]:
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
            how = inherited_kind if inherited_only else class_kind
            return how(module, module.classes[cls_name], self, _seen)
        target = module.bindings.get(cls_name)  # a re-export: `from .base import Model`
        if target is not None and target != qualname and (module_name, cls_name) not in _seen:
            return self.kind_of(target, _seen | {(module_name, cls_name)}, inherited_only=inherited_only)
        return None

    def pytree_classes(self) -> dict[str, tuple[str, str]]:
        """Every pytree class the project defines: qualified name -> (kind, via)."""
        out = {}
        for name, module in self.complete().modules.items():
            for cls in module.classes.values():
                found = class_kind(module, cls, self)
                if found is not None:
                    out[f"{name}.{cls.name}"] = found
        return out


def build_project_index(
    paths: list[str], *, cache_dir: str | os.PathLike | None = None, workers: int = 1, lazy: bool = False
) -> ProjectIndex:
    """Summarise every Python file in `paths` (files; folders are not walked: pass discovered files).

    Summaries are kept in `cache_dir` keyed by each file's bytes, so a second run over an
    unchanged tree parses nothing (summarising the 855-file jax/flax/optax corpus costs
    ~10 s of CPU); the files that do need summarising are spread over `workers` processes.

    With `lazy`, nothing is read yet: a module is parsed when a rule first asks about it
    (`module`), in whichever process asks. A run without a result cache takes this path: only
    the modules holding the bases of classes that a rule looks at are ever parsed.
    """
    index = ProjectIndex()
    packages: dict[Path, list[str]] = {}
    if lazy:
        for raw in paths:
            path = Path(raw)
            if path.suffix in (".py", ".pyi"):
                resolved = path.resolve()
                name, is_package = _module_name(resolved, packages)
                index.paths[str(resolved)] = (name, is_package)
                index.pending.setdefault(name, (str(path), is_package))
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
        resolved = path.resolve()
        name, is_package = _module_name(resolved, packages)
        index.paths[str(resolved)] = (name, is_package)
        key = hashlib.sha256(b"%s\0%d\0%s" % (name.encode(), is_package, data)).hexdigest()
        summary = store.get(key)
        if summary is not None:
            index.modules[name] = summary
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
        index.modules[name] = summary
        store.put(key, summary)
    store.save()
    return index


_POOL_THRESHOLD = 64


def _summarize_one(item) -> tuple[ModuleSummary | None, str]:
    path, name, is_package, data, _ = item
    try:
        tree = ast.parse(Path(path).read_bytes() if data is None else data, filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return summarize(tree, name, is_package), ""


class _SummaryStore:
    """Module summaries by content key in one pickle under the cache folder; any problem is a miss."""

    FILE = "project-summaries.pickle"

    def __init__(self, folder: str | os.PathLike | None) -> None:
        self._path = Path(folder) / self.FILE if folder is not None else None
        self._code = code_fingerprint()
        self._old: dict[str, ModuleSummary] = {}
        self._new: dict[str, ModuleSummary] = {}
        if self._path is not None:
            try:
                with open(self._path, "rb") as handle:
                    code, summaries = pickle.load(handle)
                if code == self._code and isinstance(summaries, dict):
                    self._old = summaries
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
                pass

    def get(self, key: str) -> ModuleSummary | None:
        summary = self._old.get(key)
        if summary is not None:
            self._new[key] = summary
        return summary

    def put(self, key: str, summary: ModuleSummary) -> None:
        self._new[key] = summary

    def save(self) -> None:
        """Keep exactly the summaries of this run's files (so the store never grows without bound)."""
        if self._path is None or self._new.keys() == self._old.keys():
            return
        store_pickle(self._path.parent, self._path, (self._code, self._new))
