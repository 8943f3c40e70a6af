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
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from jaxfix.analysis import filememo
from jaxfix.engine.cache import CacheEntry, cache_key, content_digest, result_mode
from jaxfix.engine.config import Config
from jaxfix.engine.project import NO_ENTRIES, Entered, entries_digest
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
    # (CRC-32 of the bytes tested, the answer) of `_root_test`, when this process tested the file
    root_text: tuple[int, bool] | None = None
    # build the fixes' edits (False: a check that prints only what the fixes are, `Fix.built`)
    edits: bool = True


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
    # for the cache: (key, entry) of a computed result, which the run's session keeps (`CacheSession.save`)
    cache_entry: tuple[str, CacheEntry] | None = None


# Objects left since the last collection (live ones included) past which a finished job is
# followed by a collection of the young generations: most jobs leave too little to be worth one.
_COLLECT_AFTER = 200_000


def run_job(job: Job) -> FileOutcome:
    """One file's analysis with the cyclic collector paused: nearly everything it allocates (the
    trees, the facts of the rules) lives until it returns, so collections during it only walk
    live objects. When it returns, the analyses' memos of the file are dropped (`filememo`), so
    its trees are freed by reference counting rather than walked by the next collection (corpus
    check -j 1: 0.4 s less in the collector). The cycles jobs leave are collected after a job once
    they may add up to a few files' worth (`_COLLECT_AFTER`), so memory stays bounded. That
    collection runs before the next job, not as this one returns: its caller still holds the
    file's trees then, and walking them (seconds on a 50,000-line file) freed nothing; after
    the last job there is none."""
    enabled = gc.isenabled()
    if enabled and gc.get_count()[0] > _COLLECT_AFTER:
        gc.collect(1)
    if _deferred:
        gc.set_threshold(*_deferred.pop())
    gc.disable()
    try:
        return _run_job(job)
    finally:
        filememo.forget()  # the file's tree is freed by reference counting, not walked by a collection
        if enabled:
            _defer_collection()
            gc.enable()


# The collector's thresholds before `_defer_collection` raised them (restored by the next job).
_deferred: list[tuple[int, int, int]] = []


def _defer_collection() -> None:
    """Keep the collector from running as soon as a job returns: the job allocated far past the
    threshold with the collector paused, so re-enabled it would collect at the caller's next
    allocation (1.0 s of CPU on a 50,000-line check, whose process then exits). The next job
    collects first (`_COLLECT_AFTER`) and restores the thresholds; until then the collector runs
    only after as many allocations again as the thresholds allow."""
    thresholds = gc.get_threshold()
    if not _deferred:
        _deferred.append(thresholds)
    base = _deferred[0]
    gc.set_threshold(gc.get_count()[0] + max(base[0], _COLLECT_AFTER), *base[1:])


def _run_job(job: Job) -> FileOutcome:
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
        outcome = analyze_bytes(
            data,
            job.path,
            job.config,
            fix=job.fix,
            project=project,
            facts_of=job.module if job.facts else None,
            root_text=job.root_text,
            edits=job.edits,
        )
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
        outcome.cache_entry = (job_key(job, content_digest(data)), entry)  # written once, by the session
    if not job.keep_text:
        outcome.result.source, outcome.original_bytes = "", None
    return outcome


def job_key(job: Job, digest: str) -> str:
    """The cache key of `job` on a file whose bytes have `digest` (`cache.content_digest`)."""
    module = "" if job.module is None else f"{job.module[0]}:{int(job.module[1])}"
    return cache_key(digest, job.path, job.config.fingerprint(), result_mode(job.fix, job.edits), module)


def job_slot(job: Job) -> tuple[str, str]:
    """The slot of `job`'s result in the cache's pack (`ResultCache`): its file and mode."""
    return job.path, result_mode(job.fix, job.edits)


def analyze_bytes(
    data: bytes,
    path: str,
    config: Config,
    *,
    fix: bool,
    project=None,
    facts_of: tuple[str, bool] | None = None,
    root_text: tuple[int, bool] | None = None,
    edits: bool = True,
) -> FileOutcome:
    if path.endswith(".ipynb"):  # a notebook's code cells, as one module (`notebook`); never a project module,
        from jaxfix.engine.notebook import analyze_notebook  # but it reads the project's (what it imports)

        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return FileOutcome(FileResult(path, "", error=f"not valid utf-8 at byte {exc.start}"))
        result = analyze_notebook(text, path, config, fix=fix, project=project, edits=edits)
        outcome = FileOutcome(result, encoding="utf-8", original_bytes=data)
        outcome.facts = NO_ENTRIES if facts_of is not None else None
        return outcome
    try:
        source = decode(data)
    except SourceError as exc:
        return FileOutcome(FileResult(path, "", error=str(exc)))
    tree = None
    root = False  # may a transform enter one of the module's functions (what its facts need a tree for)
    if facts_of is not None:
        from jaxfix.engine.project import may_be_root

        known = root_text[1] if root_text is not None and root_text[0] == zlib.crc32(data) else None
        root = may_be_root(source.text, path, source.encoding, known=known)
    if root:
        import ast

        try:
            tree = ast.parse(source.text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None  # `analyze` reports it
    from jaxfix.engine.pipeline import analyze  # the rules and libcst: only once a file needs them

    # Without a tree, `analyze` parses the text only if some rule looks into it (else it checks
    # the syntax alone, for less): most files no transform is named in are never parsed.
    result = analyze(source.text, path, config, fix=fix, project=project, tree=tree, edits=edits)
    outcome = FileOutcome(result, encoding=source.encoding, original_bytes=data)
    if facts_of is not None and not root:
        outcome.facts = NO_ENTRIES
    elif tree is not None:
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


class _Scheduler:
    """The run's jobs on its workers (a pool started on first need), largest files first, with a
    queue this process can still reorder: few batches are handed to the pool at a time, so a job
    queued later (a second analysis) can go ahead of the rest."""

    def __init__(self, jobs: list[Job], sizes: Sequence[int], workers: int, project: object, digests) -> None:
        self.jobs = jobs  # a queued job is read when its batch is sent: it may still be replaced
        self.sizes = sizes
        self.workers = workers
        self.project = project
        self.digests = digests
        self.queue: list[list[int]] = []  # batches of job indices, the next one first
        self.executor: ProcessPoolExecutor | None = None
        self.frozen = False  # whether `start` moved this process's objects out of the collector's reach
        self.running: dict = {}  # future -> its batch
        self.target = 1

    def push(self, indices: Sequence[int], *, first: bool = False) -> None:
        """Queue the jobs `indices` (at the front with `first`), largest first, in batches of about
        a thirty-second of a worker's share of the bytes: large files alone, small ones together
        (a job per submission cost the main process a third of a second of CPU on the corpus)."""
        order = sorted(indices, key=lambda i: -self.sizes[i])
        batches: list[list[int]] = []
        current: list[int] = []
        held = 0
        for i in order:
            current.append(i)
            held += self.sizes[i]
            if held >= self.target or len(current) >= 32:
                batches.append(current)
                current, held = [], 0
        if current:
            batches.append(current)
        self.queue = [*batches, *self.queue] if first else [*self.queue, *batches]

    def start(self, jobs: Sequence[int]) -> None:
        """Decide, for the jobs `jobs` (about to be queued), whether a pool pays; size the batches.
        Called before they are queued (`push` cuts batches to the size set here)."""
        total = len(jobs)
        self.target = max(1, sum(self.sizes[i] for i in jobs) // (self.workers * 32))
        if self.workers > 1 and total >= POOL_THRESHOLD:
            # fork after the rules and what every job runs are imported: the workers share them
            from jaxfix.analysis import callgraph  # noqa: F401 - `project.module_facts`
            from jaxfix.engine import pipeline, registry  # noqa: F401 - `analyze`, the parser's helpers

            registry.all_rules()
            # what exists now (the rules, libcst, the run's index) lives through the run: out of the
            # collector's reach until `close` (it walked it again here, 0.04 s of a corpus check,
            # and would write into the workers' copies of its pages)
            gc.freeze()
            self.frozen = True
            self.executor = process_pool(
                self.workers, initializer=_share_project, initargs=(self.project, self.digests)
            )
        else:
            _share_project(self.project, self.digests)

    def submit(self, everything: bool = False) -> None:
        """Hand the pool the next batches, up to two per worker in flight (with `everything`, all
        of them: this process is about to be busy, and the pool must not wait for it)."""
        while self.executor is not None and self.queue and (everything or len(self.running) < 2 * self.workers):
            batch = self.queue.pop(0)
            self.running[self.executor.submit(_run_batch, [self.jobs[i] for i in batch])] = batch

    def requeue(self, first: set[int]) -> None:
        """Queue the jobs still waiting again, those of `first` ahead of the others."""
        waiting = [i for batch in self.queue for i in batch]
        self.queue = []
        self.push([i for i in waiting if i in first])
        self.push([i for i in waiting if i not in first])

    def done(self) -> Iterator[tuple[int, FileOutcome]]:
        """(job index, outcome) as jobs finish, until nothing is queued or running; the caller may
        queue more meanwhile."""
        if self.executor is None:
            while self.queue:
                for i in self.queue.pop(0):
                    yield i, run_job(self.jobs[i])
            return
        from concurrent.futures import FIRST_COMPLETED, wait

        while self.queue or self.running:
            self.submit()
            finished, _ = wait(self.running, return_when=FIRST_COMPLETED)
            for future in finished:
                for i, outcome in zip(self.running.pop(future), future.result()):
                    yield i, outcome

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(cancel_futures=True)
        if self.frozen:
            gc.unfreeze()  # a process that runs again (`--watch`, the editor) collects them as before


def run_jobs(
    jobs: Sequence[Job],
    workers: int | None = None,
    on_done: Callable[[FileOutcome], None] | None = None,
    *,
    project: object = None,
    session: object = None,
) -> list[FileOutcome]:
    """Outcomes of `jobs`, in their order; `on_done` is called once per job as its first analysis
    (or cache hit) settles it, for a progress bar. `project` is the run's lazy project index;
    `session` (`jaxfix.engine.session.CacheSession`) answers cache lookups and keeps what the run
    learned.

    With a project, the files that may name a transform (the only possible roots of the call
    graph) are analysed first; once they are, this process propagates, and while the other files
    are analysed, the files other modules' traced code enters are analysed again (or, when not
    started yet, analysed once with their entries)."""
    workers = workers or default_jobs()
    jobs = list(jobs)
    results: list[FileOutcome | None] = [None] * len(jobs)
    for i, job in enumerate(jobs):
        if session is not None:
            results[i] = session.lookup(job)
            if results[i] is not None and on_done is not None:
                on_done(results[i])
    missing = [i for i, outcome in enumerate(results) if outcome is None]
    sizes = [session.size(job.path) if session is not None else _size(job.path) for job in jobs]
    digests = session.module_digests() if session is not None else None
    scheduler = _Scheduler(jobs, sizes, workers, _worker_view(project), digests)
    scheduler.start(missing)
    scheduler.push(missing)
    roots_first = set(missing)
    if project is not None:
        # The pool starts on the largest files at once; meanwhile this process reads which files
        # may be roots, and the jobs not handed out yet are queued again with those first.
        scheduler.submit()
        tested = {i: _root_test(jobs[i].path, session) for i in missing}
        roots_first = {i for i in missing if tested[i][1]}
        for i in missing:  # the jobs not handed out yet need not search their text again
            jobs[i] = replace(jobs[i], root_text=tested[i])
        scheduler.requeue(roots_first)
    not_roots = [i for i in missing if i not in roots_first]
    waiting = len(roots_first)  # first analyses of possible roots still to come
    entered = None
    counted: set[int] = set()  # jobs whose first outcome went to `on_done`

    def settle(i: int) -> None:
        """After the propagation: analyse job `i` again if it ran with other entries than its own."""
        module = jobs[i].module
        if module is not None and entered.digest(module[0]) != results[i].entries_digest:
            jobs[i] = replace(jobs[i], entries=entered.entries(module[0]), facts=False)
            scheduler.push([i], first=True)

    if project is not None:
        # What the text test said of the others: the propagation need not read them again to know.
        for i in not_roots:
            if jobs[i].facts:
                project.learn(jobs[i].module[0], NO_ENTRIES)
    try:
        if project is not None and not roots_first:
            entered = _propagate(project, session)
            for i in range(len(jobs)):
                if results[i] is not None:
                    settle(i)
        for i, outcome in scheduler.done():
            results[i] = outcome
            if session is not None and outcome.cache_entry is not None:
                session.computed(jobs[i], *outcome.cache_entry)
                outcome.cache_entry = None
            if outcome.facts is not None:
                project.learn(jobs[i].module[0], outcome.facts)
                if session is not None:
                    session.learned(jobs[i].module, outcome.facts)
            if on_done is not None and i not in counted:
                counted.add(i)
                on_done(outcome)
            if project is None:
                continue
            if entered is None:
                waiting -= i in roots_first
                if waiting == 0:
                    # The propagation takes this process a while (it may summarise the modules the
                    # roots call into): the workers get every file left meanwhile. A file it then
                    # finds entered, analysed without its entries, is analysed again (`settle`).
                    scheduler.submit(everything=True)
                    entered = _propagate(project, session)
                    for j, queued in enumerate(jobs):  # the files not started yet get their entries now
                        if results[j] is None and queued.module is not None and entered.digest(queued.module[0]):
                            jobs[j] = replace(queued, entries=entered.entries(queued.module[0]))
                    for j in range(len(jobs)):
                        if results[j] is not None:
                            settle(j)
            else:
                settle(i)
    finally:
        scheduler.close()
    if session is not None:
        session.save(project)
    return results  # type: ignore[return-value]


def _propagate(project, session) -> Entered:
    """What other modules' traced code enters, once every possible root is known."""
    return session.entered(project) if session is not None else Entered.of(project.entered_modules())


def _root_test(path: str, session) -> tuple[int, bool]:
    """(CRC-32 of the bytes read, could the file at `path` be a root of the call graph): a
    transform named in it, the test `project.may_be_root` applies to the text it reads. (-1, True)
    when it cannot be read here. The worker that analyses the file takes the answer for bytes
    with that checksum (a file rewritten since is searched again)."""
    from jaxfix.engine.project import may_be_root

    data = session.data(path) if session is not None else None
    if data is None:
        try:
            data = Path(path).read_bytes()
        except OSError:
            return -1, True
    return zlib.crc32(data), may_be_root(data.decode("utf-8", errors="replace"), path)


def _worker_view(project: object) -> object:
    """The index as the analyses in this process see it: a shallow copy, so the entries a job is
    told (`assume_entries`) never become this process's own answer; summaries are shared."""
    return copy.copy(project) if project is not None else None


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
