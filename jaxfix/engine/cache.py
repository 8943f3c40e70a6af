"""A result cache so a second run over an unchanged tree does almost no work.

Keyed by the file's bytes, jaxfix's own code (version plus a hash of its source,
so an edited rule never serves stale results), the effective config, the fix mode
and the file's module name. An entry holds the FileResult and what it depended on in
other files (the modules its rules asked the project index about, with the digests of
their files, and what other modules' traced code made traced in it), which the run checks
before using it (`jaxfix.engine.session`). Entries are pickled and written atomically; a
corrupt or unreadable entry is a miss, never an error.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import time
from pathlib import Path

from dataclasses import dataclass

import codemods
import jaxfix
from jaxfix.model import FileResult

CACHE_DIR_NAME = ".jaxfix_cache"
# A file modified this close before a run started may be modified again within the same tick of
# the file system's clock, keeping its status (modification time, size, inode): only its bytes
# say whether it changed (the rule git applies to "racily clean" index entries).
RACY_NS = 2_000_000_000


@functools.cache
def code_fingerprint() -> str:
    """A digest of jaxfix's own code (part of every cache key): each source file by its size and
    modification time, or by its bytes when it changed in the last two seconds (then a second
    edit within one tick of the file system's clock could keep its status; the session's digest
    memo applies the same rule to checked files). Reading every file cost a twentieth of a warm check."""
    digest = hashlib.sha256(jaxfix.__version__.encode())
    recent = time.time_ns() - RACY_NS
    for package in (jaxfix, codemods):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            status = path.stat()
            if status.st_mtime_ns >= recent:
                digest.update(path.read_bytes())
            else:
                digest.update(f"\0{status.st_size}:{status.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def content_digest(data: bytes) -> str:
    """The digest of a file's bytes that the caches of a run key on."""
    return hashlib.sha256(data).hexdigest()[:32]  # sha256: hardware-accelerated, twice blake2b's speed


def cache_key(content: str, path: str, config_fingerprint: str, fix: bool, module: str) -> str:
    """The key of a file's result: `content` is `content_digest` of its bytes, `module` its module
    name in the project index ("" without one)."""
    digest = hashlib.sha256()
    for part in (code_fingerprint(), config_fingerprint, module, "fix" if fix else "check", path, content):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    """A cached result and what it depended on beyond its own file: (module, digest of its file
    when the result was computed, None for a module not in the project) for every module its
    rules asked about, and the digest of what other modules' traced code made traced in it."""

    result: FileResult
    consulted: tuple[tuple[str, str | None], ...] = ()
    entries_digest: str = ""


class ResultCache:
    """Results by key, one file each (workers write them as they finish), and a pack of the
    entries the last fully cached run looked up, in one file: a warm run reads that one file
    instead of opening one per checked file (855 opens were a sixth of a warm corpus check)."""

    PACK = "results-pack.pickle"

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._pack: dict[str, CacheEntry] | None = None  # read on the first `get`
        self._unpacked = 0  # lookups the pack did not answer

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pickle"

    def get(self, key: str) -> CacheEntry | None:
        if self._pack is None:
            pack = load_for_this_code(self.folder / self.PACK)
            self._pack = pack if isinstance(pack, dict) else {}
        value = self._pack.get(key)
        if value is None:
            self._unpacked += 1
            try:
                # the path as a string: two path joins per lookup cost as much as reading the entry
                with open(os.path.join(self.folder, key[:2], f"{key}.pickle"), "rb") as handle:
                    value = pickle.load(handle)
            except _PICKLE_PROBLEMS:
                return None
            if not (isinstance(value, CacheEntry) and isinstance(value.result, FileResult)):
                return None
        return value

    def put(self, key: str, entry: CacheEntry) -> None:
        store_pickle(self.folder, self._entry(key), entry)

    def save_pack(self, used: dict[str, CacheEntry], lookups: int) -> None:
        """After a run that made `lookups` lookups and used the entries `used` (key -> entry): when
        it used one for every lookup and the pack lacked some, pack them (exactly this run's
        entries: the pack never grows without bound)."""
        if self._unpacked and len(used) == lookups:
            store_for_this_code(self.folder / self.PACK, used)


_PICKLE_PROBLEMS = (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError)


def load_for_this_code(path: Path) -> object | None:
    """What `store_for_this_code` kept at `path`, if this very code kept it; any problem is None."""
    try:
        with open(path, "rb") as handle:
            code, value = pickle.load(handle)
    except _PICKLE_PROBLEMS:
        return None
    return value if code == code_fingerprint() else None


def store_for_this_code(path: Path, value: object) -> None:
    """Keep `value` at `path` (a file of the cache folder), for this code only (`load_for_this_code`)."""
    store_pickle(path.parent, path, (code_fingerprint(), value))


def store_pickle(folder: Path, entry: Path, value: object) -> None:
    """Pickle `value` to `entry` (inside cache `folder`) atomically; failing only costs speed."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        if not (folder / ".gitignore").exists():
            (folder / ".gitignore").write_text("*\n")
        import tempfile  # here: a cached run writes nothing

        fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
    except OSError:
        pass
