"""Analyse many files, in a process pool when it pays, with deterministic output order.

Each worker reads its own file (so bytes never travel through the pool twice),
decodes it, consults the result cache, and calls `engine.analyze`. Problems with
one file become that file's one-line error; the run goes on.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from jaxfix.engine import analyze
from jaxfix.engine.cache import ResultCache, cache_key
from jaxfix.engine.config import Config
from jaxfix.engine.source import SourceError, decode
from jaxfix.model import FileResult

POOL_THRESHOLD = 8  # below this many files a pool costs more than it saves


@dataclass(frozen=True)
class Job:
    path: str
    config: Config
    fix: bool
    project_fingerprint: str = ""
    cache_dir: str | None = None


# Facts about the whole run (the project index), set once per process rather than
# pickled into every job: the index of a large tree is hundreds of kilobytes.
_shared_project: object = None


def _share_project(project: object) -> None:
    global _shared_project
    _shared_project = project
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


def run_job(job: Job) -> FileOutcome:
    try:
        data = Path(job.path).read_bytes()
    except OSError as exc:
        return FileOutcome(FileResult(job.path, "", error=f"cannot read: {exc.strerror or exc}"))
    if job.cache_dir is None:
        return analyze_bytes(data, job.path, job.config, fix=job.fix, project=_shared_project)
    hit = cached_outcome(job, data)
    if hit is not None:
        return hit
    outcome = analyze_bytes(data, job.path, job.config, fix=job.fix, project=_shared_project)
    # the source text is the file's bytes decoded, which a hit has anyway: not stored twice
    ResultCache(job.cache_dir).put(_key(job, data), replace(outcome.result, source=""))
    return outcome


def _key(job: Job, data: bytes) -> str:
    return cache_key(data, job.path, job.config.fingerprint(), job.fix, job.project_fingerprint)


def cached_outcome(job: Job, data: bytes | None = None) -> FileOutcome | None:
    """The cached result of `job`, if its file's bytes, config and project are unchanged."""
    if job.cache_dir is None:
        return None
    if data is None:
        try:
            data = Path(job.path).read_bytes()
        except OSError:
            return None  # the worker reports it
    hit = ResultCache(job.cache_dir).get(_key(job, data))
    if hit is None:
        return None
    try:
        source = decode(data)
    except SourceError:
        encoding = None  # a file that does not decode: its cached result is the error
    else:
        encoding, hit.source = source.encoding, source.text
    return FileOutcome(hit, encoding=encoding, original_bytes=data, cached=True)


def analyze_bytes(data: bytes, path: str, config: Config, *, fix: bool, project=None) -> FileOutcome:
    try:
        source = decode(data)
    except SourceError as exc:
        return FileOutcome(FileResult(path, "", error=str(exc)))
    result = analyze(source.text, path, config, fix=fix, project=project)
    return FileOutcome(result, encoding=source.encoding, original_bytes=data)


def process_pool(workers: int, **kwargs) -> ProcessPoolExecutor:
    """A pool that forks (cheap) unless this process has imported jax: forking a process with
    jax's threads running can deadlock (the LSP server, tests and `explain` import it)."""
    method = "spawn" if "jax" in sys.modules else None
    context = multiprocessing.get_context(method) if method else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, **kwargs)


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def run_jobs(
    jobs: Sequence[Job],
    workers: int | None = None,
    on_done: Callable[[FileOutcome], None] | None = None,
    *,
    project: object = None,
) -> list[FileOutcome]:
    workers = workers or default_jobs()
    # Cache hits are answered here: on an unchanged tree no pool is started at all.
    results: list[FileOutcome | None] = []
    for job in jobs:
        hit = cached_outcome(job)
        results.append(hit)
        if hit is not None and on_done is not None:
            on_done(hit)
    missing = [i for i, outcome in enumerate(results) if outcome is None]
    todo = [jobs[i] for i in missing]
    if workers <= 1 or len(todo) < POOL_THRESHOLD:
        _share_project(project)
        iterator = map(run_job, todo)
        pool = None
    else:
        pool = process_pool(workers, initializer=_share_project, initargs=(project,))
        iterator = pool.map(run_job, todo, chunksize=max(1, min(16, len(todo) // (workers * 4))))
    try:
        for i, outcome in zip(missing, iterator):
            results[i] = outcome
            if on_done is not None:
                on_done(outcome)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return results
