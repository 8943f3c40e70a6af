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


def result_mode(fix: bool, edits: bool) -> str:
    """What a result holds: fixes applied, or findings with their fixes' edits built or not
    (`Fix.built`); part of its key and of its slot in the pack."""
    return "fix" if fix else "check" if edits else "check-titles"


def cache_key(content: str, path: str, config_fingerprint: str, mode: str, module: str) -> str:
    """The key of a file's result: `content` is `content_digest` of its bytes, `mode` what it holds
    (`result_mode`), `module` its module name in the project index ("" without one)."""
    digest = hashlib.sha256()
    for part in (code_fingerprint(), config_fingerprint, module, mode, path, content):
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
    """Results by key, all in one file (the pack), written once per run by the main process after
    the run (`save`): a first run over the jax/flax/optax corpus wrote one file per checked file,
    855 temporary files renamed into 256 folders, a third of its time (issue #33 item 7); a warm
    run reads that one file instead of opening one per checked file.

    The pack holds one entry per slot (a file's path and the mode, `result_mode`): this run's
    entries, and those of earlier runs for the files this run did not look at (so checking one
    folder, then another, keeps both), while their files exist."""

    PACK = "results-pack.pickle"

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._pack: dict[str, tuple[tuple[str, str], CacheEntry]] | None = None  # read on the first `get`

    def _packed(self) -> dict[str, tuple[tuple[str, str], CacheEntry]]:
        if self._pack is None:
            pack = load_for_this_code(self.folder / self.PACK)
            self._pack = pack if isinstance(pack, dict) else {}
        return self._pack

    def get(self, key: str) -> CacheEntry | None:
        value = self._packed().get(key)
        if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], CacheEntry)):
            return None
        return value[1] if isinstance(value[1].result, FileResult) else None

    def save(self, entries: dict[str, tuple[tuple[str, str], CacheEntry]]) -> None:
        """Keep `entries` (key -> (slot, entry): every result this run used or computed) with the
        earlier entries of the slots this run did not fill; one write, and none when the pack
        would stay as it is (a warm run)."""
        old = self._packed()
        slots = {slot for slot, _ in entries.values()}
        kept = {
            key: value for key, value in old.items()
            if key not in entries and value[0] not in slots and os.path.exists(value[0][0])
        }
        pack = {**kept, **entries}
        if pack.keys() != old.keys():
            store_for_this_code(self.folder / self.PACK, pack)
            self._pack = pack


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
