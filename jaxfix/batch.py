"""From command-line paths to per-file outcomes: discovery, selection of the files to
process (changed since a revision, one shard), config per file, cache, and the pool."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jaxfix.engine import registry
from jaxfix.engine.config import Config, ConfigError, ConfigResolver
from jaxfix.engine.discovery import discover
from jaxfix.engine.runner import FileOutcome, Job, run_jobs


@dataclass
class BatchOptions:
    fix: bool = False
    workers: int | None = None
    cache_dir: str | None = None
    changed_since: str | None = None
    shard: tuple[int, int] | None = None  # (K, N), 1-based K
    keep_text: bool = True  # each outcome keeps its text and bytes (for writing, diffs, --add-noqa)
    edits: bool = True  # the fixes' edits are built (False: only what they are is printed, `Fix.built`)


@dataclass
class BatchOutcome:
    files: list[FileOutcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # discovery and config errors, one line each
    warnings: list[str] = field(default_factory=list)  # problems the run went past (a skipped pyproject.toml)

    @property
    def findings(self):
        return [f for outcome in self.files for f in outcome.result.findings]

    @property
    def file_errors(self) -> list[str]:
        return [f"{o.result.path}: {o.result.error}" for o in self.files if o.result.error]


def build_project(paths: list[str], configs: list[Config], resolved: list[Path] | None = None):
    """The lazy project index (cross-file facts: pytree bases in other modules, the call graph),
    when a selected rule reads it. Nothing is parsed here: the checks tell it the call graph's
    roots (`jaxfix.engine.runner`), and a module is summarised when a question needs it."""
    wanted = [
        code.code
        for rule in registry.catalog()
        if rule.uses_project or rule.follows_calls
        for code in rule.codes
    ]
    if not any(config.code_selected(code) for config in configs for code in wanted):
        return None
    from jaxfix.engine.project import build_project_index

    return build_project_index(paths, lazy=True, resolved=resolved)


def parse_shard(text: str) -> tuple[int, int]:
    k, sep, n = text.partition("/")
    if not sep or not k.isdigit() or not n.isdigit() or not 1 <= int(k) <= int(n):
        raise ValueError(f"--shard must look like K/N with 1 <= K <= N, got {text!r}")
    return int(k), int(n)


def in_shard(path: Path, shard: tuple[int, int]) -> bool:
    """A stable split by a hash of the path as given, so every machine agrees without coordination."""
    k, n = shard
    digest = hashlib.sha1(path.as_posix().encode()).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1


def run_paths(
    paths: list[str],
    resolver: ConfigResolver,
    options: BatchOptions,
    on_total: Callable[[int], None] | None = None,
    on_done: Callable[[FileOutcome], None] | None = None,
) -> BatchOutcome:
    found = discover(paths, resolver)
    outcome = BatchOutcome(errors=list(found.errors), warnings=resolver.warnings)  # the resolver's list: it grows
    resolved = dict(zip(found.paths, found.real))
    files = found.paths  # strings throughout: a path object per file cost a third of a cached run
    if options.changed_since is not None:
        # imported here: it runs git, only when asked
        from jaxfix.engine.gitutil import GitError, changed_since

        try:
            changed = changed_since(options.changed_since, Path.cwd())
        except GitError as exc:
            outcome.errors.append(f"--changed-since {options.changed_since}: {exc}")
            return outcome
        files = [p for p in files if Path(resolved[p]) in changed]
    if options.shard is not None:
        files = [p for p in files if in_shard(Path(p), options.shard)]
    configs: dict[str, Config] = {}
    by_folder: dict[str, Config] = {}  # files of one folder share its config (a link: its target's)
    for path in files:
        try:
            if path in found.links:
                configs[path] = resolver.for_path(path)
            else:
                folder = os.path.dirname(path)
                if folder not in by_folder:
                    by_folder[folder] = resolver.for_folder(Path(os.path.dirname(resolved[path])))
                configs[path] = by_folder[folder]
        except ConfigError as exc:
            outcome.errors.append(str(exc))
    # the index covers every discovered file, also those outside --changed-since or the shard
    every = found.paths
    project = build_project(every, list(configs.values()), found.real) if configs else None
    if project is not None:
        project.whole_tree = all(os.path.isdir(p) for p in paths)
    modules = {path: (name, is_package) for name, (path, is_package) in project.pending.items()} if project else {}
    jobs = []
    for path, config in configs.items():
        module = modules.get(path)
        facts = module is not None  # the file the index has for that module name (not a duplicate)
        if project is not None and module is None:
            module = project.module_for_path(path)
        keep, edits = options.keep_text, options.edits
        jobs.append(Job(path, config, options.fix, options.cache_dir, module, facts, keep_text=keep, edits=edits))
    session = None
    if options.cache_dir is not None:
        from jaxfix.engine.session import CacheSession

        session = CacheSession(options.cache_dir, every, project)
    if on_total is not None:
        on_total(len(jobs))
    outcome.files = run_jobs(jobs, options.workers, on_done, project=project, session=session)
    return outcome
