"""Which files to look at: the paths given, walked, minus gitignored, excluded and build folders.

Explicitly named files are always taken (as in Ruff); folders are walked in sorted
order without following symlinked folders, so the list is deterministic and a
symlink loop cannot trap the walk.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jaxfix.engine.config import ConfigResolver

if TYPE_CHECKING:
    import pathspec  # imported where a .gitignore is read: most checked folders have none

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one line each, naming the path
    resolved: list[Path] = field(default_factory=list)  # each file's resolved path, in the same order


def _git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


@dataclass
class _IgnoreRules:
    """The .gitignore files in force for a folder, each matched relative to its own folder."""

    specs: tuple[tuple[Path, pathspec.PathSpec], ...] = ()

    def extended(self, folder: Path) -> "_IgnoreRules":
        gitignore = folder / ".gitignore"
        if not gitignore.is_file():
            return self
        try:
            lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return self
        import pathspec

        return _IgnoreRules((*self.specs, (folder, pathspec.GitIgnoreSpec.from_lines(lines))))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for base, spec in self.specs:
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


def _initial_rules(folder: Path) -> _IgnoreRules:
    """Gitignores from the repository root down to `folder` (exclusive).

    A folder the user names explicitly is checked even when git ignores it (an installed
    package in a virtualenv, say): then only the .gitignore files inside it apply.
    """
    root = _git_root(folder)
    rules = _IgnoreRules()
    if root is None:
        return rules
    chain = [folder, *folder.parents]
    for ancestor in reversed(chain[1 : chain.index(root) + 1]):
        rules = rules.extended(ancestor)
    return _IgnoreRules() if rules.ignored(folder, is_dir=True) else rules


def discover(paths: list[str], resolver: ConfigResolver, *, respect_gitignore: bool = True) -> Discovery:
    found = Discovery()
    seen: set[Path] = set()

    def add(path: Path, key: Path) -> None:
        if key not in seen:
            seen.add(key)
            found.files.append(path)
            found.resolved.append(key)

    for raw in paths:
        path = Path(raw)
        if path.is_file():
            add(path, path.resolve())
        elif path.is_dir():
            start_rules = _initial_rules(path.resolve()) if respect_gitignore else _IgnoreRules()
            for file, resolved in _walk(path, start_rules, resolver, respect_gitignore, found):
                add(file, resolved)
        elif path.is_symlink():
            found.errors.append(f"{raw}: broken symbolic link")
        else:
            found.errors.append(f"{raw}: no such file or directory")
    return found


def _walk(top: Path, rules: _IgnoreRules, resolver: ConfigResolver, respect_gitignore: bool, found: Discovery):
    """(path as found, resolved path) of every Python file under `top`. Folders are resolved once
    and their entries joined to that (symbolic links are resolved themselves): resolving every
    path costs a system call per path component."""
    stack = [(top, top.resolve(), rules)]
    while stack:
        folder, resolved_folder, rules = stack.pop()
        if respect_gitignore:
            rules = rules.extended(folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            found.errors.append(f"{folder}: cannot list folder: {exc.strerror or exc}")
            continue
        config = resolver.for_path(folder)
        subfolders = []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.name.endswith(PYTHON_SUFFIXES):
                    continue  # only folders and Python files are ever taken: no path to build
                is_file = entry.is_file()
                path = Path(entry.path)
                resolved = path.resolve() if entry.is_symlink() else resolved_folder / entry.name
            except OSError:
                continue
            if config.excluded(str(path), str(top), resolved=resolved) or (
                respect_gitignore and rules.ignored(resolved, is_dir)
            ):
                continue
            if is_dir:
                if (path / "pyvenv.cfg").exists():
                    continue  # a virtualenv, whatever its name
                subfolders.append((path, resolved, rules))
            elif is_file and path.suffix in PYTHON_SUFFIXES:
                yield path, resolved
        stack.extend(reversed(subfolders))
