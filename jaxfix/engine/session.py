"""What a run with a cache reuses from the runs before it (`jaxfix check` without `--no-cache`).

Per file, a result (`cache.ResultCache`) keyed by the file's bytes, the config, jaxfix's code and
the file's module, and valid while the modules its rules asked the project index about keep their
files (by digest): a pytree base class edited in another module is a miss, an edited function body
elsewhere is not. Per module, the project's record of it (`project.module_facts`: a root of the
call graph with its summaries, or no entries), in the summary store. Per tree (every module's file
unchanged), the propagation's answer (`project.EntriesStore`).

A warm run over an unchanged tree therefore looks up one result per file: no parse, no call
graph, no pool, and no read either for a file whose status (modification time, size, inode) is the
one the digest memo recorded it with (`_DigestMemo`); any other file is read and hashed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from jaxfix.engine.cache import RACY_NS, CacheEntry, ResultCache, content_digest, load_for_this_code, store_for_this_code
from jaxfix.engine.project import Entered, EntriesStore, ProjectIndex, _SummaryStore, summary_key
from jaxfix.engine.runner import FileOutcome, Job, job_key, job_slot
from jaxfix.engine.source import SourceError, decode


class CacheSession:
    """One run's view of the cache folder: the digest of every file of the run, read once."""

    def __init__(self, folder: str, files: Iterable[str], project: ProjectIndex | None) -> None:
        self.folder = folder
        self.results = ResultCache(folder)
        self.digests: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        self._data: dict[str, bytes] = {}
        self._memo = _DigestMemo(folder)
        for path in files:
            try:
                status = os.stat(path)
                digest = self._memo.digest(path, status)
                if digest is None:
                    with open(path, "rb") as handle:
                        data = handle.read()
                    digest = content_digest(data)
                    self._data[path] = data  # until the results are settled (`entered`)
            except OSError:
                continue  # the worker reports it
            self.digests[path], self.sizes[path] = digest, status.st_size
            self._memo.keep(path, status, digest)
        # module -> (path as given, digest of its file with the package flag): what results depend on
        self.modules: dict[str, tuple[str, str]] = {}
        if project is not None:
            for name, (path, is_package) in project.pending.items():
                if path in self.digests:
                    self.modules[name] = (path, f"{self.digests[path]}:{int(is_package)}")
        self._store: _SummaryStore | None = None
        self._learned: dict[str, tuple] = {}
        # key -> (slot, entry): the entries lookups answered from and the results computed, for the pack
        self._used: dict[str, tuple[tuple[str, str], CacheEntry]] = {}

    def size(self, path: str) -> int:
        return self.sizes.get(path, 0)

    def data(self, path: str) -> bytes | None:
        """The bytes of `path` as this session read them (None once the results are settled)."""
        return self._data.get(path)

    def module_digests(self) -> dict[str, str]:
        """module -> digest of its file (what a cache entry records for each module it asked about)."""
        return {name: digest for name, (_, digest) in self.modules.items()}

    def lookup(self, job: Job) -> FileOutcome | None:
        """The cached outcome of `job`, if its file, config and the modules it asked about are unchanged."""
        digest = self.digests.get(job.path)
        if digest is None:
            return None
        key = job_key(job, digest)
        entry = self.results.get(key)
        if entry is None:
            return None
        if any(self.modules.get(name, (None, None))[1] != seen for name, seen in entry.consulted):
            return None
        result, data = entry.result, self._data.get(job.path)
        if job.keep_text and data is None:  # known by its status: read now, and still those bytes?
            try:
                with open(job.path, "rb") as handle:
                    data = handle.read()
            except OSError:
                return None
            if content_digest(data) != digest:
                return None
        encoding = None
        if job.keep_text and data is not None:
            try:
                source = decode(data)
            except SourceError:
                pass  # a file that does not decode: its cached result is the error
            else:  # on a copy: the entry stays without its text (it may be packed)
                encoding, result = source.encoding, replace(result, source=source.text)
        else:
            data = None
        self._used[key] = (job_slot(job), entry)
        return FileOutcome(
            result, encoding=encoding, original_bytes=data, cached=True,
            consulted=tuple(name for name, _ in entry.consulted), entries_digest=entry.entries_digest,
        )

    def computed(self, job: Job, key: str, entry: CacheEntry) -> None:
        """Keep the result a worker computed for `job` (under `key`) for the pack this run writes."""
        self._used[key] = (job_slot(job), entry)

    def learned(self, module: tuple[str, bool], record: tuple) -> None:
        self._learned[module[0]] = record

    def _summaries(self) -> _SummaryStore:
        if self._store is None:
            self._store = _SummaryStore(self.folder)
        return self._store

    def _key(self, name: str) -> str:
        path, digest = self.modules[name]
        content, _, package = digest.rpartition(":")
        return summary_key(name, package == "1", content)

    def entered(self, project: ProjectIndex) -> Entered:
        """`project.entered_modules()`, reused when every module's file is the one it was."""
        self._data.clear()  # the results are settled: the bytes are no longer needed here
        entries = EntriesStore(self.folder)
        tree = EntriesStore.tree_digest(self.modules)
        known = entries.get(tree)
        if known is not None:
            return known
        store = self._summaries()
        for name in self.modules:
            if name not in self._learned:
                record = store.get(self._key(name))
                if record is not None:
                    project.learn(name, record)
        entered = Entered.of(project.entered_modules())
        entries.put(tree, entered)
        return entered

    def save(self, project: ProjectIndex | None) -> None:
        """Keep the digests of this run's files, and each module's record for the next run (only
        when this run looked at the store)."""
        self._memo.save()
        self.results.save(self._used)
        if project is None or self._store is None:
            return
        store = self._store
        for name in self.modules:
            record = project.record(name) or self._learned.get(name)
            if record is not None:
                store.put(self._key(name), record)
        store.save()


class _DigestMemo:
    """path -> (modification time, size, inode, digest) of the files of the last run, and when
    that run started: a file whose status is unchanged and was last modified well before that has
    the same bytes, and need not be read to know its digest."""

    FILE = "digests.pickle"

    def __init__(self, folder: str) -> None:
        self._path = Path(folder) / self.FILE
        self.started = time.time_ns()  # before any status is taken
        known = load_for_this_code(self._path)
        valid = isinstance(known, tuple) and len(known) == 2 and isinstance(known[1], dict)
        self._since, self._old = known if valid else (0, {})
        self._new: dict[str, tuple[int, int, int, str]] = {}
        self._misses = 0

    def digest(self, path: str, status: os.stat_result) -> str | None:
        """The digest of the file at `path` if its `status` says it is unchanged, else None."""
        old = self._old.get(path)
        if old is not None and old[:3] == (status.st_mtime_ns, status.st_size, status.st_ino):
            if status.st_mtime_ns < self._since - RACY_NS:
                return old[3]
        self._misses += 1
        return None

    def keep(self, path: str, status: os.stat_result, digest: str) -> None:
        self._new[path] = (status.st_mtime_ns, status.st_size, status.st_ino, digest)

    def save(self) -> None:
        """Keep exactly this run's files (the memo never grows without bound), once some file had
        to be read: a run that read none leaves the memo as it is."""
        if self._misses or self._new.keys() != self._old.keys():
            store_for_this_code(self._path, (self.started, self._new))
