"""What a run with a cache reuses from the runs before it (`jaxfix check` without `--no-cache`).

Per file, a result (`cache.ResultCache`) keyed by the file's bytes, the config, jaxfix's code and
the file's module, and valid while the modules its rules asked the project index about keep their
files (by digest): a pytree base class edited in another module is a miss, an edited function body
elsewhere is not. Per module, the project's record of it (`project.module_facts`: a root of the
call graph with its summaries, or no entries), in the summary store. Per tree (every module's file
unchanged), the propagation's answer (`project.EntriesStore`).

A warm run over an unchanged tree therefore reads each file once, hashes it, and looks up one
result per file: no parse, no call graph, no pool.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from jaxfix.engine.cache import ResultCache, content_digest
from jaxfix.engine.project import Entered, EntriesStore, ProjectIndex, _SummaryStore, summary_key
from jaxfix.engine.runner import FileOutcome, Job, job_key
from jaxfix.engine.source import SourceError, decode


class CacheSession:
    """One run's view of the cache folder: the digest of every file of the run, read once."""

    def __init__(self, folder: str, files: Iterable[str], project: ProjectIndex | None) -> None:
        self.folder = folder
        self.results = ResultCache(folder)
        self.digests: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        self._data: dict[str, bytes] = {}
        for path in files:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue  # the worker reports it
            self.digests[path], self.sizes[path] = content_digest(data), len(data)
            self._data[path] = data  # until the results are settled (`entered`)
        # module -> (path as given, digest of its file with the package flag): what results depend on
        self.modules: dict[str, tuple[str, str]] = {}
        if project is not None:
            for name, (path, is_package) in project.pending.items():
                if path in self.digests:
                    self.modules[name] = (path, f"{self.digests[path]}:{int(is_package)}")
        self._store: _SummaryStore | None = None
        self._learned: dict[str, tuple] = {}

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
        entry = self.results.get(job_key(job, digest))
        if entry is None:
            return None
        if any(self.modules.get(name, (None, None))[1] != seen for name, seen in entry.consulted):
            return None
        result, data = entry.result, self._data.get(job.path)
        encoding = None
        if job.keep_text and data is not None:
            try:
                source = decode(data)
            except SourceError:
                pass  # a file that does not decode: its cached result is the error
            else:
                encoding, result.source = source.encoding, source.text
        else:
            data = None
        return FileOutcome(
            result, encoding=encoding, original_bytes=data, cached=True,
            consulted=tuple(name for name, _ in entry.consulted), entries_digest=entry.entries_digest,
        )

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
        """Keep each module's record for the next run (only when this run looked at the store)."""
        if project is None or self._store is None:
            return
        store = self._store
        for name in self.modules:
            record = project.record(name) or self._learned.get(name)
            if record is not None:
                store.put(self._key(name), record)
        store.save()
