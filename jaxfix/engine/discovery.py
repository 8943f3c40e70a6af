"""Which files to look at: the paths given, walked, minus gitignored, excluded and build folders.

Explicitly named files are always taken (as in Ruff); folders are walked in sorted
order without following symlinked folders, so the list is deterministic and a
symlink loop cannot trap the walk.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jaxfix.engine.config import ConfigResolver

if TYPE_CHECKING:
    import pathspec  # imported where a .gitignore is read: most checked folders have none

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")  # notebooks: `notebook`


@dataclass
class Discovery:
    """The files found, as strings: a check looks up each of them, and a path object per file
    cost a third of a cached check of 855 files (`files`, `resolved`: as `Path`s, on demand)."""

    paths: list[str] = field(default_factory=list)  # each file as found (joined to the path given)
    errors: list[str] = field(default_factory=list)  # one line each, naming the path
    real: list[str] = field(default_factory=list)  # each file's resolved path, in the same order
    links: set[str] = field(default_factory=set)  # the files of `paths` that are symbolic links

    @property
    def files(self) -> list[Path]:
        return [Path(p) for p in self.paths]

    @property
    def resolved(self) -> list[Path]:
        return [Path(p) for p in self.real]


def _git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


@dataclass(frozen=True)
class _NameSpec:
    """A .gitignore made only of names (`__pycache__/`, `*.egg-info/`, `.venv`, `*.pyc`: no `/`
    but a trailing one, no negation, escape, character class or `**`), the common kind, matched
    as git matches it without importing pathspec (a tenth of a cached check): a name matches any
    component of the path, a name ending in `/` only a folder's. `match_file` as pathspec's:
    a folder's path ends with `/`."""

    patterns: tuple[tuple[str, bool], ...]  # (the name, whose wildcards `fnmatchcase` reads; folders only)

    @classmethod
    def of(cls, lines: list[str]) -> _NameSpec | None:
        patterns = []
        for line in lines:
            if not line or line.startswith("#"):
                continue
            if line != line.strip() or any(c in line for c in "!\\[]") or "**" in line:
                return None  # whitespace to strip or keep, negation, escapes, classes: pathspec's
            folders_only = line.endswith("/")
            name = line[:-1] if folders_only else line
            if not name or "/" in name:
                return None  # anchored or nested: pathspec's
            patterns.append((name, folders_only))
        return cls(tuple(patterns))

    def match_file(self, path: str) -> bool:
        is_dir = path.endswith("/")
        parts = path.rstrip("/").split("/")
        last = len(parts) - 1
        for name, folders_only in self.patterns:
            for i, part in enumerate(parts):
                if folders_only and i == last and not is_dir:
                    continue
                if fnmatch.fnmatchcase(part, name):
                    return True
        return False


@dataclass
class _IgnoreRules:
    """The .gitignore files in force for a folder, each matched relative to its own folder."""

    specs: tuple[tuple[Path, pathspec.PathSpec | _NameSpec], ...] = ()

    def extended(self, folder: Path) -> _IgnoreRules:
        gitignore = folder / ".gitignore"
        if not gitignore.is_file():
            return self
        try:
            lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return self
        names = _NameSpec.of(lines)
        if names is not None:
            return _IgnoreRules((*self.specs, (folder, names)))
        import pathspec

        return _IgnoreRules((*self.specs, (folder, pathspec.GitIgnoreSpec.from_lines(lines))))

    def under(self, folder: Path) -> tuple[tuple[pathspec.PathSpec, str], ...]:
        """(spec, `folder` relative to its base) of each spec whose base holds `folder`: what
        `ignored_in` composes the folder's entries' paths from."""
        found = []
        for base, spec in self.specs:
            try:
                found.append((spec, folder.relative_to(base).as_posix()))
            except ValueError:
                continue
        return tuple(found)

    @staticmethod
    def ignored_in(specs: tuple[tuple[pathspec.PathSpec, str], ...], name: str, is_dir: bool) -> bool:
        """`ignored` of the entry `name` of the folder `specs` were taken `under`."""
        for spec, folder in specs:
            rel = _child(folder, name)
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False

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
    seen: set[str] = set()

    def add(path: str, key: str, link: bool) -> None:
        if key not in seen:
            seen.add(key)
            found.paths.append(path)
            found.real.append(key)
            if link:
                found.links.add(path)

    for raw in paths:
        path = Path(raw)
        if path.is_file():
            add(str(path), str(path.resolve()), path.is_symlink())
        elif path.is_dir():
            start_rules = _initial_rules(path.resolve()) if respect_gitignore else _IgnoreRules()
            for file, resolved, link in _walk(path, start_rules, resolver, respect_gitignore, found):
                add(file, resolved, link)
        elif path.is_symlink():
            found.errors.append(f"{raw}: broken symbolic link")
        else:
            found.errors.append(f"{raw}: no such file or directory")
    return found


def _walk(top: Path, rules: _IgnoreRules, resolver: ConfigResolver, respect_gitignore: bool, found: Discovery):
    """(path as found, resolved path, is a link) of every Python file under `top`, as strings.
    Folders are resolved once and their entries joined to that (symbolic links are resolved
    themselves): resolving every path costs a system call per path component."""
    stack = [(top, top.resolve(), rules)]
    while stack:
        folder, resolved_folder, rules = stack.pop()
        if respect_gitignore:
            rules = rules.extended(resolved_folder)  # specs match resolved paths: based on one too
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            found.errors.append(f"{folder}: cannot list folder: {exc.strerror or exc}")
            continue
        config = resolver.for_folder(resolved_folder)
        # The folder's relative paths, once: an entry's are the folder's and its name.
        folder_rel = config.relative_path(str(folder), str(top), resolved_folder)
        excluded = config.excluded_in(folder_rel, _child)
        specs = rules.under(resolved_folder) if respect_gitignore else ()
        real_folder = str(resolved_folder)
        given_folder = str(folder)  # as `Path` spells it: "." for the current folder, no "./"
        subfolders = []
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not name.endswith(PYTHON_SUFFIXES):
                    continue  # only folders and Python files are ever taken
                is_file = entry.is_file()
                link = entry.is_symlink()
                path = name if given_folder == "." else os.path.join(given_folder, name)  # `str(folder / name)`
                resolved = Path(path).resolve() if link else None
            except OSError:
                continue
            if link:  # resolved elsewhere: its relative paths are its own
                skip = config.excluded(path, str(top), resolved=resolved) or (
                    respect_gitignore and rules.ignored(resolved, is_dir)
                )
            else:
                skip = excluded(name) or (
                    respect_gitignore and rules.ignored_in(specs, name, is_dir)
                )
            if skip:
                continue
            if is_dir:
                if os.path.exists(os.path.join(path, "pyvenv.cfg")):
                    continue  # a virtualenv, whatever its name
                subfolders.append((Path(path), resolved or resolved_folder / name, rules))
            elif is_file and os.path.splitext(name)[1] in PYTHON_SUFFIXES:  # as `Path.suffix` ("x/.py": none)
                yield path, str(resolved) if link else os.path.join(real_folder, name), link
        stack.extend(reversed(subfolders))


def _child(folder: str, name: str) -> str:
    """The POSIX relative path of entry `name` of a folder whose relative path is `folder` (what
    `Path(folder, name).as_posix()` gives)."""
    if folder == ".":
        return name
    return folder + name if folder.endswith("/") else f"{folder}/{name}"
