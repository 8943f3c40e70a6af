"""`[tool.jaxfix]` for the documents of a workspace, reloaded when a pyproject.toml changes.

The resolver caches one config per folder; a change to any pyproject.toml (a
watched-file event, a save, or `workspace/didChangeConfiguration`) throws the
cache away, so the next analysis reads the file again. A broken config is
reported to the user once per distinct message, and the defaults are used
meanwhile; jaxfix never silently drops a rule without saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jaxfix.engine.config import Config, ConfigError, ConfigResolver


class Settings:
    def __init__(self, report: Callable[[str], None] = lambda message: None) -> None:
        self._report = report
        self._resolver = ConfigResolver()
        self._reported: set[str] = set()
        self.roots: list[Path] = []
        self.generation = 0  # bumped on every reload; part of the analysis cache key

    def set_roots(self, roots: list[Path]) -> None:
        self.roots = roots

    def reload(self) -> None:
        self._resolver = ConfigResolver()
        self._reported.clear()
        self.generation += 1

    def config_for(self, path: str | None) -> Config:
        """The config that applies to `path` (the first workspace root's for unsaved buffers)."""
        where = Path(path) if path else (self.roots[0] if self.roots else None)
        if where is None:
            return Config()
        try:
            return self._resolver.for_path(where)
        except ConfigError as exc:
            message = f"jaxfix: {exc}; using the default settings until it is fixed"
            if message not in self._reported:
                self._reported.add(message)
                self._report(message)
            return Config()


def is_config_file(path: str | None) -> bool:
    return path is not None and Path(path).name == "pyproject.toml"
