"""Analyse many files, in a process pool when it pays, with deterministic output order.

Each worker reads its own file (so bytes never travel through the pool twice), decodes it,
parses it once, and calls `engine.analyze` with that tree. Problems with one file become that
file's one-line error; the run goes on.

With a project index, a run has two passes over the pool, and no barrier before the first:

1. every file is analysed as if no other module's traced code called into it, and the worker
   also tells, from the tree it parsed anyway, whether a transform enters one of the module's
   functions (`project.module_facts`): the roots of the call graph, found without a second parse;
2. this process propagates from those roots (`ProjectIndex.cross_entries`) and the few files that
   other modules' traced code enters are analysed again, told what is traced in them.

A file's result depends on the project only through those entries and the summaries of the
modules its rules asked about (`ProjectIndex.module`, recorded while it is analysed), so that
is what a cached result is checked against: the digests of those modules' files and of its
entries. An unchanged tree (the same files with the same bytes) reuses the propagation too
(`project.EntriesStore`): a warm run reads each file, looks its result up, and starts no pool.
"""

from __future__ import annotations

import copy
import gc
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from jaxfix.engine.cache import CacheEntry, ResultCache, cache_key, content_digest
from jaxfix.engine.config import Config
from jaxfix.engine.project import Entered, entries_digest
from jaxfix.engine.source import SourceError, decode
from jaxfix.model import FileResult

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

POOL_THRESHOLD = 8  # below this many files a pool costs more than it saves


@dataclass(frozen=True)
class Job:
    path: str
    config: Config
    fix: bool
    cache_dir: str | None = None
    # (name, is_package) of the file's module in the project index, when the run has one
    module: tuple[str, bool] | None = None
    # also return what the project index should know of the module (`project.module_facts`)
    facts: bool = False
    # what other modules' traced code makes traced here (the second pass); None: nothing
    entries: Mapping | None = None
    keep_text: bool = True  # return the text and bytes (writing, diffs, --add-noqa need them)


# Facts about the whole run (the project index, and the digest of each module's file for cache
# entries), set once per process rather than pickled into every job: the index of a large tree
# is hundreds of kilobytes.
_shared_project: object = None
_shared_digests: Mapping[str, str] = {}


def _share_project(project: object, digests: Mapping[str, str] | None = None) -> None:
    global _shared_project, _shared_digests
    _shared_project, _shared_digests = project, digests or {}
    tune_gc()


def tune_gc() -> None:
    """Collect cycles after 100,000 net allocations instead of 700: parsing builds hundreds of
    thousands of small objects per file, and Python's default thresholds spent ~20% of a check
    in the cyclic collector (corpus check -j 1: 25.4 s -> 20.4 s CPU). Memory stays bounded."""
    gc.set_threshold(100_000, 50, 100)


@dataclass
class FileOutcome:
    """A FileResult plus what writing it back needs."""

    result: FileResult
    encoding: str | None = None
    original_bytes: bytes | None = None
    cached: bool = False
    # for the project: the module's store record (`module_facts`), when the job asked for it
    facts: tuple | None = None
    # for the cache: the modules the analysis asked the project about, and the digest of its entries
    consulted: tuple[str, ...] = ()
    entries_digest: str = ""


def run_job(job: Job) -> FileOutcome:
    try:
        data = Path(job.path).read_bytes()
    except OSError as exc:
        return FileOutcome(FileResult(job.path, "", error=f"cannot read: {exc.strerror or exc}"))
    project = _shared_project
    if project is not None:
        # Only the entries this run propagated count here (the first pass: none yet).
        project.assume_entries({job.module[0]: dict(job.entries)} if job.entries and job.module else {})
        project.consulted = {} if job.cache_dir is not None else None
    try:
        outcome = analyze_bytes(data, job.path, job.config, fix=job.fix, project=project, facts_of=job.module if job.facts else None)
    finally:
        consulted = tuple(project.consulted or ()) if project is not None else ()
        if project is not None:
            project.consulted = None
    outcome.consulted = consulted
    outcome.entries_digest = entries_digest(job.entries)
    if job.cache_dir is not None:
        # the source text is the file's bytes decoded, which a hit has anyway: not stored twice
        deps = tuple((name, _shared_digests.get(name)) for name in consulted)
        entry = CacheEntry(replace(outcome.result, source=""), deps, outcome.entries_digest)
        ResultCache(job.cache_dir).put(job_key(job, content_digest(data)), entry)
    if not job.keep_text:
        outcome.result.source, outcome.original_bytes = "", None
    return outcome


def job_key(job: Job, digest: str) -> str:
    """The cache key of `job` on a file whose bytes have `digest` (`cache.content_digest`)."""
    module = "" if job.module is None else f"{job.module[0]}:{int(job.module[1])}"
    return cache_key(digest, job.path, job.config.fingerprint(), job.fix, module)


def analyze_bytes(
    data: bytes, path: str, config: Config, *, fix: bool, project=None, facts_of: tuple[str, bool] | None = None
) -> FileOutcome:
    try:
        source = decode(data)
    except SourceError as exc:
        return FileOutcome(FileResult(path, "", error=str(exc)))
    tree = None
    if facts_of is not None:
        import ast

        try:
            tree = ast.parse(source.text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None  # `analyze` reports it
    from jaxfix.engine.pipeline import analyze  # the rules and libcst: only once a file needs them

    result = analyze(source.text, path, config, fix=fix, project=project, tree=tree)
    outcome = FileOutcome(result, encoding=source.encoding, original_bytes=data)
    if facts_of is not None and tree is not None:
        from jaxfix.engine.project import module_facts

        outcome.facts = module_facts(source.text, tree, facts_of[0], facts_of[1], path, source.encoding)
    return outcome


def process_pool(workers: int, **kwargs) -> ProcessPoolExecutor:
    """A pool that forks (cheap) unless this process has imported jax: forking a process with
    jax's threads running can deadlock (the LSP server, tests and `explain` import it)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor  # imported here: a cached run starts no pool

    method = "spawn" if "jax" in sys.modules else None
    context = multiprocessing.get_context(method) if method else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, **kwargs)


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _run_batch(jobs: list[Job]) -> list[FileOutcome]:
    return [run_job(job) for job in jobs]


@dataclass
class _Pool:
    """The run's workers, started on first need and kept for the second pass."""

    workers: int
    project: object
    digests: Mapping[str, str] | None = None  # module -> digest of its file (cache entries record them)
    executor: ProcessPoolExecutor | None = None

    def run(self, jobs: Sequence[Job], sizes: Sequence[int], on_done: Callable[[int, FileOutcome], None]) -> None:
        """Run `jobs`, calling `on_done(i, outcome)` as each finishes: largest files first, so
        that no large file is left for the end while the other workers idle."""
        order = sorted(range(len(jobs)), key=lambda i: -sizes[i])
        if self.workers <= 1 or (len(jobs) < POOL_THRESHOLD and self.executor is None):
            if self.executor is None:
                _share_project(self.project, self.digests)
            for i in order:
                on_done(i, run_job(jobs[i]))
            return
        if self.executor is None:
            # fork after the rules are imported: the workers share them
            from jaxfix.engine import registry

            registry.all_rules()
            self.executor = process_pool(
                self.workers, initializer=_share_project, initargs=(self.project, self.digests)
            )
        from concurrent.futures import FIRST_COMPLETED, wait

        pending = {}
        for batch in _batches(order, sizes, self.workers):
            future = self.executor.submit(_run_batch, [jobs[i] for i in batch])
            pending[future] = batch
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                for i, outcome in zip(pending.pop(future), future.result()):
                    on_done(i, outcome)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(cancel_futures=True)


def _batches(order: list[int], sizes: Sequence[int], workers: int) -> list[list[int]]:
    """`order` (largest first) cut into batches of about an eighth of a worker's share of bytes:
    large files alone, small ones together (one round trip each)."""
    target = max(1, sum(sizes) // (workers * 8))
    batches: list[list[int]] = []
    current: list[int] = []
    held = 0
    for i in order:
        current.append(i)
        held += sizes[i]
        if held >= target or len(current) >= 32:
            batches.append(current)
            current, held = [], 0
    if current:
        batches.append(current)
    return batches


def run_jobs(
    jobs: Sequence[Job],
    workers: int | None = None,
    on_done: Callable[[FileOutcome], None] | None = None,
    *,
    project: object = None,
    session: object = None,
) -> list[FileOutcome]:
    """Outcomes of `jobs`, in their order; `on_done` is called once per job as the first pass
    settles it (for a progress bar). `project` is the run's lazy project index; `session`
    (`jaxfix.engine.session.CacheSession`) answers cache lookups and keeps what the run learned."""
    workers = workers or default_jobs()
    results: list[FileOutcome | None] = [None] * len(jobs)
    for i, job in enumerate(jobs):
        if session is not None:
            results[i] = session.lookup(job)
            if results[i] is not None and on_done is not None:
                on_done(results[i])
    missing = [i for i, outcome in enumerate(results) if outcome is None]
    sizes = [session.size(job.path) if session is not None else _size(job.path) for job in jobs]
    digests = session.module_digests() if session is not None else None
    pool = _Pool(workers, _worker_view(project), digests)

    def first(k: int, outcome: FileOutcome) -> None:
        i = missing[k]
        results[i] = outcome
        if outcome.facts is not None:
            project.learn(jobs[i].module[0], outcome.facts)
            if session is not None:
                session.learned(jobs[i].module, outcome.facts)
        if on_done is not None:
            on_done(outcome)

    try:
        pool.run([jobs[i] for i in missing], [sizes[i] for i in missing], first)
        if project is not None:
            entered = session.entered(project) if session is not None else Entered.of(project.entered_modules())
            # the files other modules' traced code enters, unless analysed with those very entries
            again = [
                i
                for i, job in enumerate(jobs)
                if job.module is not None and entered.digest(job.module[0]) != results[i].entries_digest
            ]

            def second(k: int, outcome: FileOutcome) -> None:
                results[again[k]] = outcome

            redo = [replace(jobs[i], entries=entered.entries(jobs[i].module[0]), facts=False) for i in again]
            pool.run(redo, [sizes[i] for i in again], second)
    finally:
        pool.close()
    if session is not None:
        session.save(project)
    return results  # type: ignore[return-value]


def _worker_view(project: object) -> object:
    """The index as the analyses in this process see it: a shallow copy, so the entries a job is
    told (`assume_entries`) never become this process's own answer; summaries are shared."""
    return copy.copy(project) if project is not None else None


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
