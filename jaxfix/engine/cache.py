"""A result cache so a second run over an unchanged tree does almost no work.

Keyed by the file's bytes, jaxfix's own code (version plus a hash of its source,
so an edited rule never serves stale results), the effective config, the fix mode
and the cross-file facts. Entries are pickled FileResults written atomically; a
corrupt or unreadable entry is a miss, never an error.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
from pathlib import Path

import codemods
import jaxfix
from jaxfix.model import FileResult

CACHE_DIR_NAME = ".jaxfix_cache"


@functools.cache
def code_fingerprint() -> str:
    digest = hashlib.sha256(jaxfix.__version__.encode())
    for package in (jaxfix, codemods):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_key(data: bytes, path: str, config_fingerprint: str, fix: bool, project_fingerprint: str) -> str:
    digest = hashlib.sha256()
    for part in (code_fingerprint(), config_fingerprint, project_fingerprint, "fix" if fix else "check", path):
        digest.update(part.encode())
        digest.update(b"\0")
    digest.update(data)
    return digest.hexdigest()


class ResultCache:
    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pickle"

    def get(self, key: str) -> FileResult | None:
        try:
            with open(self._entry(key), "rb") as handle:
                value = pickle.load(handle)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
            return None
        return value if isinstance(value, FileResult) else None

    def put(self, key: str, result: FileResult) -> None:
        store_pickle(self.folder, self._entry(key), result)


def store_pickle(folder: Path, entry: Path, value: object) -> None:
    """Pickle `value` to `entry` (inside cache `folder`) atomically; failing only costs speed."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        if not (folder / ".gitignore").exists():
            (folder / ".gitignore").write_text("*\n")
        fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
    except OSError:
        pass
