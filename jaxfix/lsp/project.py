"""The workspace's project index for the language server: what `jaxfix check` knows across files.

A pytree whose base class lives in another file, or a function that another module's traced
code calls, is only seen with the index (`jaxfix.engine.project`). The server builds it once,
in a thread of its own after `initialized` (the first analyses do not wait: they run without
it, then every open document is analysed again when it is ready), and refreshes a file's
entry when the editor saves it. The index is lazy: a module is parsed when a question needs it,
and the call graph reads only the files that name a jax transform and what they call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from jaxfix.engine.config import ConfigResolver
from jaxfix.engine.discovery import discover
from jaxfix.engine.project import ProjectIndex, build_project_index


class WorkspaceIndex:
    """The current index (None until built) and the means to build and refresh it."""

    def __init__(self) -> None:
        self.index: ProjectIndex | None = None
        self._lock = threading.Lock()  # a refresh and the build never interleave
        self.build_seconds: float | None = None

    def build(self, roots: list[Path], on_ready: Callable[[], None]) -> threading.Thread:
        """Discover the Python files under `roots` and index them in a daemon thread; `on_ready`
        is called (from that thread) once the index is in place."""

        def run() -> None:
            import time

            started = time.perf_counter()
            found = discover([str(r) for r in roots], ConfigResolver())
            index = build_project_index([str(p) for p in found.files], lazy=True)
            index.whole_tree = True  # the workspace's folders
            index.cross_entries(None)  # the call graph, here rather than in the first analysis
            with self._lock:
                self.index = index
            self.build_seconds = time.perf_counter() - started
            on_ready()

        thread = threading.Thread(target=run, name="jaxfix-project-index", daemon=True)
        thread.start()
        return thread

    def refresh(self, path: str) -> bool:
        """Read the saved file at `path` again; True if the index has it (open documents should
        then be analysed again: what it says about the others may have changed)."""
        with self._lock:
            if self.index is None or Path(path).suffix not in (".py", ".pyi"):
                return False
            self.index.refresh(path)
            self.index.cross_entries(None)
            return True
