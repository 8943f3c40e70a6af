"""`[tool.jaxfix]` in the nearest pyproject.toml above each file, validated strictly.

An unknown key or a value of the wrong type is an error naming the file and the
key: a typo in config must never silently switch a rule off.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jaxfix.engine import registry

DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    ".eggs",
    "*.egg-info",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".jaxfix_cache",
    "site-packages",
    # Jupyter's autosave copies of every notebook opened (Ruff excludes them too): a second copy of
    # each finding, often of an older text (heldout28: 36 of 194 findings were in such copies)
    ".ipynb_checkpoints",
)


class ConfigError(Exception):
    """A config problem; the message names the file and the key."""


class InvalidToml(ConfigError):
    """A pyproject.toml that is not TOML. `configures_jaxfix`: its text names jaxfix, so it meant to
    configure this tool, and ignoring it would run other rules than the user chose."""

    def __init__(self, message: str, configures_jaxfix: bool):
        super().__init__(message)
        self.configures_jaxfix = configures_jaxfix


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("JAX",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    unsafe_fixes: bool = False
    # also the findings whose evidence was mostly wrong on code nobody prepared (`Finding.preview`)
    preview: bool = False
    rule_options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    root: str | None = None  # folder of the pyproject.toml it came from

    def options(self) -> dict[str, dict[str, Any]]:
        return {rule: dict(opts) for rule, opts in self.rule_options}

    def with_options(self, rule: str, **values: Any) -> "Config":
        merged = self.options()
        merged.setdefault(rule, {}).update(values)
        return replace(self, rule_options=_freeze_options(merged))

    def code_selected(self, code: str, path: str | None = None) -> bool:
        if not registry.is_selected(code, tuple(self.select), tuple(self.ignore)):  # kept per tuple
            return False
        if path is not None and self.per_file_ignores:
            rel = self.relative_path(path)
            for pattern, codes in self.per_file_ignores:
                if _path_matches(rel, pattern) and any(code.startswith(c.upper()) for c in codes):
                    return False
        return True

    def excluded(self, path: str, walk_root: str | None = None, *, resolved: Path | None = None) -> bool:
        """Patterns match the path relative to the config's folder (or to the folder being walked),
        never the folders above it: checking a tree that lives under site-packages must work.
        `resolved` is `path` already resolved, when the caller has it (discovery does)."""
        return self.excluded_relative(self.relative_path(path, walk_root, resolved))

    def excluded_in(self, folder_rel: str, child: Callable[[str, str], str]) -> Callable[[str], bool]:
        """`excluded_relative` of the entries of a folder whose relative path is `folder_rel`, as a
        test of an entry's name (`child(folder_rel, name)` is its relative path): the folder's own
        components are matched once, not again for each of its entries."""
        component, whole = _exclude_matchers((*DEFAULT_EXCLUDE, *self.exclude))
        parts = child(folder_rel, "\0").split("/")[:-1]  # the components an entry's path has before its name
        folder_hit = component is not None and any(component.match(os.path.normcase(part)) for part in parts)

        def excluded(name: str) -> bool:
            if folder_hit or (component is not None and component.match(os.path.normcase(name))):
                return True
            return any(_path_matches(child(folder_rel, name), p) for p in whole)

        return excluded

    def excluded_relative(self, rel: str) -> bool:
        """`excluded` of a path given as `relative_path` gives it (discovery composes a folder's
        entries' from the folder's: no path object per file)."""
        component, whole = _exclude_matchers((*DEFAULT_EXCLUDE, *self.exclude))
        if component is not None and any(component.match(os.path.normcase(part)) for part in rel.split("/")):
            return True
        return any(_path_matches(rel, p) for p in whole)

    def fingerprint(self) -> str:
        """A digest of what decides findings (part of every cache key: asked once per file, so
        kept per distinct config; an option holding a list is not hashable, so not kept)."""
        facts = (
            self.select, self.ignore, self.exclude, self.per_file_ignores, self.unsafe_fixes, self.preview, self.rule_options
        )
        try:
            return _fingerprint(*facts)
        except TypeError:
            return _fingerprint.__wrapped__(*facts)

    def relative_path(self, path: str, walk_root: str | None = None, resolved: Path | None = None) -> str:
        """`path` as `excluded` and per-file ignores match it: relative to the config's folder or
        else to `walk_root` (POSIX separators), else as given. `resolved` is `path` resolved, when
        the caller has it."""
        p = Path(path)
        for root in (self.root, walk_root):
            if root is not None:
                if resolved is None:
                    resolved = p.resolve()
                try:
                    return resolved.relative_to(_resolved_root(root)).as_posix()
                except ValueError:
                    pass
        return p.as_posix()


@functools.lru_cache(maxsize=256)
def _fingerprint(*facts: object) -> str:
    return hashlib.sha256(json.dumps(list(facts), default=str).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=256)
def _resolved_root(root: str) -> Path:
    """Config and walk roots, resolved once: a handful of folders asked about for every file."""
    return Path(root).resolve()


@functools.lru_cache(maxsize=64)
def _exclude_matchers(patterns: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
    """(one regex for every pattern without '/', which matches any path component; the others).
    Discovery asks for every file and folder: one compiled regex instead of one fnmatch per
    component and pattern."""
    component = [p.rstrip("/") for p in patterns if "/" not in p.rstrip("/")]
    whole = tuple(p for p in patterns if "/" in p.rstrip("/"))
    if not component:
        return None, whole
    return re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in component)), whole


def _path_matches(rel: str, pattern: str) -> bool:
    """Gitignore-like: a pattern without '/' matches any path component; otherwise the path."""
    pattern = pattern.rstrip("/")
    if "/" not in pattern:
        return any(fnmatch.fnmatch(part, pattern) for part in rel.split("/"))
    return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern + "/*") or rel.startswith(pattern + "/")


def _freeze_options(options: dict[str, dict[str, Any]]) -> tuple:
    return tuple(sorted((rule, tuple(sorted(opts.items()))) for rule, opts in options.items()))


_TOP_KEYS = {"select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "unsafe-fixes", "preview"}


def _string_list(where: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings, got {value!r}")
    return tuple(value)


def _codes(where: str, key: str, value: Any) -> tuple[str, ...]:
    codes = _string_list(where, key, value)
    for code in codes:
        if not registry.known_prefix(code):
            raise ConfigError(f"{where}: `{key}` names unknown rule code {code!r}")
    return tuple(c.upper() for c in codes)


def parse_table(table: dict[str, Any], where: str, root: str | None = None) -> Config:
    """Validate a `[tool.jaxfix]` table into a Config."""
    tables: dict[str, list] = {}
    for rule in registry.catalog():
        tables.setdefault(rule.table(), []).append(rule)
    config = Config(root=root)
    options: dict[str, dict[str, Any]] = {}
    exclude: list[str] = []
    for key, value in table.items():
        if key == "select":
            config = replace(config, select=_codes(where, key, value))
        elif key == "ignore":
            config = replace(config, ignore=_codes(where, key, value))
        elif key in ("exclude", "extend-exclude"):
            exclude.extend(_string_list(where, key, value))
        elif key in ("unsafe-fixes", "preview"):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: `{key}` must be true or false, got {value!r}")
            config = replace(config, **{key.replace("-", "_"): value})
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: `per-file-ignores` must be a table of pattern = [codes]")
            pfi = tuple((pattern, _codes(where, f"per-file-ignores.{pattern}", codes)) for pattern, codes in value.items())
            config = replace(config, per_file_ignores=pfi)
        elif key in tables:
            options[key] = _rule_options(where, key, tables[key], value)
        else:
            known = ", ".join(sorted(_TOP_KEYS | set(tables)))
            raise ConfigError(f"{where}: unknown key `{key}` in [tool.jaxfix] (known: {known})")
    return replace(config, exclude=tuple(exclude), rule_options=_freeze_options(options))


def _rule_options(where: str, table: str, rules: list, value: Any) -> dict[str, Any]:
    """Options of the rules that read `[tool.jaxfix.<table>]` (a family's rules may share one)."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [tool.jaxfix.{table}] must be a table")
    known = {opt.name: opt for rule in rules for opt in rule.options}
    for name, setting in value.items():
        opt = known.get(name)
        if opt is None:
            names = ", ".join(sorted(known)) or "none"
            raise ConfigError(f"{where}: unknown option `{name}` for rule {table} (options: {names})")
        problem = opt.validate(setting)
        if problem:
            raise ConfigError(f"{where}: `{table}.{name}`: {problem}")
    return dict(value)


def load_pyproject(path: Path) -> Config | None:
    """The jaxfix config in one pyproject.toml, or None when it has no [tool.jaxfix]."""
    if sys.version_info >= (3, 11):  # imported here: most runs read no pyproject.toml
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidToml(f"{path}: invalid TOML: {exc}", configures_jaxfix="jaxfix" in text) from None
    table = data.get("tool", {}).get("jaxfix")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.jaxfix] must be a table")
    return parse_table(table, str(path), root=str(path.parent))


@dataclass
class ConfigResolver:
    """Finds the config for each file: nearest pyproject.toml with [tool.jaxfix], plus CLI overrides."""

    overrides: dict[str, Any] = field(default_factory=dict)
    explicit: Config | None = None  # from --config; disables discovery
    _by_dir: dict[Path, Config] = field(default_factory=dict)
    _applied: dict[int, tuple[Config, Config]] = field(default_factory=dict)  # id(found) -> (found, with overrides)
    # one line per pyproject.toml skipped on the way (invalid TOML that does not configure jaxfix)
    warnings: list[str] = field(default_factory=list)

    def for_path(self, path: str | Path) -> Config:
        if self.explicit is not None:
            return self._apply(self.explicit)
        folder = Path(path).resolve()
        return self.for_folder(folder if folder.is_dir() else folder.parent)

    def for_folder(self, folder: Path) -> Config:
        """`for_path` of a folder already resolved (discovery walks resolved folders: resolving
        costs a system call per path component)."""
        if self.explicit is not None:
            return self._apply(self.explicit)
        return self._apply(self._lookup(folder))

    def _lookup(self, folder: Path) -> Config:
        if folder in self._by_dir:
            return self._by_dir[folder]
        candidate = folder / "pyproject.toml"
        try:
            config = load_pyproject(candidate) if candidate.is_file() else None
        except InvalidToml as exc:
            # Another tool's broken file (a vendored project, a template) does not stop the run;
            # a broken [tool.jaxfix] does (Ruff errors on its own config too).
            if exc.configures_jaxfix:
                raise
            self.warnings.append(f"{exc} (it does not configure jaxfix: read as if absent)")
            config = None
        if config is None:
            config = Config() if folder.parent == folder else self._lookup(folder.parent)
        self._by_dir[folder] = config
        return config

    def _apply(self, found: Config) -> Config:
        """`found` with the command line's overrides, made once per config found (the files of a
        folder, and the folders under one pyproject.toml, share it)."""
        known = self._applied.get(id(found))
        if known is not None and known[0] is found:
            return known[1]
        config = found
        changes = {k: v for k, v in self.overrides.items() if v is not None and k != "extend_ignore" and k != "rule_options"}
        if "extend_ignore" in self.overrides and self.overrides["extend_ignore"]:
            changes["ignore"] = (*config.ignore, *self.overrides["extend_ignore"])
        config = replace(config, **changes)
        for rule, values in (self.overrides.get("rule_options") or {}).items():
            config = config.with_options(rule, **values)
        self._applied[id(found)] = (found, config)
        return config
