"""From command-line paths to per-file outcomes: discovery, config per file, the pool."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxfix.config import ConfigError, ConfigResolver
from jaxfix.discovery import discover
from jaxfix.runner import FileOutcome, Job, run_jobs


@dataclass
class BatchOutcome:
    files: list[FileOutcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # discovery and config errors, one line each

    @property
    def findings(self):
        return [f for outcome in self.files for f in outcome.result.findings]

    @property
    def file_errors(self) -> list[str]:
        return [f"{o.result.path}: {o.result.error}" for o in self.files if o.result.error]


def build_project(paths: list[str]):
    """Cross-file facts (pytree base classes defined in other modules), when that analysis exists."""
    try:
        from jaxfix.analysis.project import build_project_index
    except ImportError:
        return None
    return build_project_index(paths)


def run_paths(paths: list[str], resolver: ConfigResolver, *, fix: bool, workers: int | None = None) -> BatchOutcome:
    found = discover(paths, resolver)
    outcome = BatchOutcome(errors=list(found.errors))
    project = build_project([str(p) for p in found.files]) if found.files else None
    jobs = []
    for path in found.files:
        try:
            config = resolver.for_path(path)
        except ConfigError as exc:
            outcome.errors.append(str(exc))
            continue
        jobs.append(Job(str(path), config, fix, project))
    outcome.files = run_jobs(jobs, workers)
    return outcome
