"""A whole checked tree, summarised: module name -> its classes, their bases, and its imports.

Built once, before files are analysed, with the stdlib `ast` only (no libcst, no
imports of user code), and picklable so it can travel to a process pool. Rules
reach it as `ctx.project`; `jaxfix.analysis.pytrees` uses it to see that a class
deriving from `mypkg.base.Model` is a pytree because `Model` subclasses
`flax.struct.PyTreeNode` in another file.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path

from jaxfix.analysis.pytrees import ModuleSummary, class_kind, inherited_kind, summarize


def module_name_for(path: str | os.PathLike) -> tuple[str, bool]:
    """(dotted module name, is_package) from the file's place among `__init__.py` packages."""
    p = Path(path).resolve()
    is_package = p.name == "__init__.py"
    parts = [] if is_package else [p.stem]
    folder = p.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        if folder.parent == folder:
            break
        folder = folder.parent
    return ".".join(parts) or p.stem, is_package


@dataclass
class ProjectIndex:
    modules: dict[str, ModuleSummary] = field(default_factory=dict)
    paths: dict[str, tuple[str, bool]] = field(default_factory=dict)  # resolved path -> (module, is_package)
    errors: dict[str, str] = field(default_factory=dict)  # path -> why it was left out

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
        module = self.modules.get(module_name)
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
        for name, module in self.modules.items():
            for cls in module.classes.values():
                found = class_kind(module, cls, self)
                if found is not None:
                    out[f"{name}.{cls.name}"] = found
        return out


def build_project_index(paths: list[str]) -> ProjectIndex:
    """Summarise every Python file in `paths` (files; folders are not walked: pass discovered files)."""
    index = ProjectIndex()
    for raw in paths:
        path = Path(raw)
        if path.suffix not in (".py", ".pyi"):
            continue
        try:
            text = path.read_bytes()
            tree = ast.parse(text, filename=str(path))
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            index.errors[str(path)] = f"{type(exc).__name__}: {exc}"
            continue
        name, is_package = module_name_for(path)
        index.paths[str(path.resolve())] = (name, is_package)
        index.modules[name] = summarize(tree, name, is_package)
    return index
