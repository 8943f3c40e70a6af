"""`jaxfix check`, runnable without typer.

Most runs of jaxfix are `check` (pre-commit hooks, CI, the editor's neighbours), and most of
those are answered from the cache in a fifth of a second, of which importing typer took a fifth
(issue #21). A plain `check` command line (`parse_check_line`: known options, valid values, no
help) is therefore parsed here from `CHECK_OPTIONS` and run by `check`, and `jaxfix.cli` (typer)
is imported only for anything else: other commands, `--help`, a line to report as wrong.
`CHECK_OPTIONS` is what `jaxfix.cli.check`'s typer declarations say; tests/test_cli.py checks
they agree, and that typer and this parser give `check` the same arguments for the same lines.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Optional

from jaxfix.batch import BatchOptions, BatchOutcome, parse_shard, run_paths
from jaxfix.engine import registry
from jaxfix.engine.cache import CACHE_DIR_NAME
from jaxfix.engine.config import ConfigError, ConfigResolver, load_pyproject
from jaxfix.engine.runner import default_jobs
from jaxfix.progress import progress
from jaxfix.report import text


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


class UsageError(Exception):
    """A command line found wrong while running (an unknown rule code, a bad --shard): the
    command-line parser reports it with the usage."""


def echo(message: str, *, nl: bool = True, err: bool = False) -> None:
    """`typer.echo` for text: text the stream cannot encode (a file name on a stream set up as
    ASCII) goes out as UTF-8 bytes, as click writes it, not as an error."""
    stream = sys.stderr if err else sys.stdout
    text = message + ("\n" if nl else "")
    try:
        stream.write(text)
    except UnicodeEncodeError:
        stream.flush()
        raw = getattr(stream, "buffer", None)
        if raw is None:
            stream.write(text.encode("ascii", errors="replace").decode("ascii"))
        else:
            raw.write(text.encode("utf-8", errors="replace"))
    stream.flush()


def error(message: str) -> None:
    echo(f"error: {message}", err=True)


def split_codes(values: Optional[list[str]]) -> Optional[tuple[str, ...]]:
    if values is None:
        return None
    codes = tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
    for code in codes:
        if not registry.known_prefix(code):
            raise UsageError(f"unknown rule code or prefix {code!r}")
    return codes


def catalog_from_cache(no_cache: bool) -> None:
    """With the result cache, the rules' catalog (codes, options) is read from it too: a run whose
    results are all cached then never imports the rules (`registry.catalog`)."""
    if not no_cache:
        registry.keep_catalog_in(Path.cwd() / CACHE_DIR_NAME)


def resolver(
    select, ignore, config: Optional[Path], unsafe_fixes: Optional[bool] = None, preview: Optional[bool] = None
) -> ConfigResolver:
    overrides = {
        "select": split_codes(select), "extend_ignore": split_codes(ignore), "unsafe_fixes": unsafe_fixes,
        "preview": preview,
    }
    explicit = None
    if config is not None:
        from jaxfix.engine.config import Config

        explicit = load_pyproject(config) or Config(root=str(config.parent))
    return ConfigResolver(overrides=overrides, explicit=explicit)


def run(
    paths, resolver, *, fix: bool, jobs, stdin_filename, quiet=False, no_cache=False, changed=None, shard=None,
    keep_text=True, edits=True,
) -> BatchOutcome:
    if paths == ["-"]:
        name = stdin_filename or "-"
        config = resolver.for_path(name if stdin_filename else Path.cwd())
        from jaxfix.engine.runner import analyze_bytes

        outcome = analyze_bytes(sys.stdin.buffer.read(), name, config, fix=fix, edits=edits)
        return BatchOutcome(files=[outcome])
    try:
        shard_k_n = parse_shard(shard) if shard else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    options = BatchOptions(
        fix=fix,
        workers=jobs or default_jobs(),
        cache_dir=None if no_cache else str(Path.cwd() / CACHE_DIR_NAME),
        changed_since=changed,
        shard=shard_k_n,
        keep_text=keep_text,
        edits=edits,
    )
    with progress(not quiet) as bar:
        return run_paths(paths, resolver, options, on_total=bar.total, on_done=bar.advance)


def report_errors(outcome: BatchOutcome) -> bool:
    """Prints the run's warnings and errors; whether there were errors (warnings do not count)."""
    for line in outcome.warnings:
        echo(f"warning: {line}", err=True)
    errors = [*outcome.errors, *outcome.file_errors]
    for line in errors:
        error(line)
    return bool(errors)


def check(
    paths: list[str],
    select: Optional[list[str]] = None,
    ignore: Optional[list[str]] = None,
    config: Optional[Path] = None,
    output_format: OutputFormat = OutputFormat.text,
    statistics: bool = False,
    jobs: Optional[int] = None,
    stdin_filename: Optional[str] = None,
    quiet: bool = False,
    no_cache: bool = False,
    changed_since: Optional[str] = None,
    shard: Optional[str] = None,
    add_noqa: bool = False,
    show_fixes: bool = False,
    preview: Optional[bool] = None,
    unsafe_fixes: Optional[bool] = None,
) -> int:
    """`jaxfix check`; the exit code (0 nothing found, 1 findings, 2 a file or the config could
    not be handled). Raises `UsageError` for a command line found wrong while running.
    `unsafe_fixes` (else each file's config) tells the summary which fixes `--fix` would apply."""
    catalog_from_cache(no_cache)
    # only the json and sarif reports show the fixes' edits; the others print what the fixes are
    edits = output_format in (OutputFormat.json, OutputFormat.sarif) and not statistics and not add_noqa
    configs = resolver(select, ignore, config, preview=preview)
    try:
        outcome = run(
            paths, configs, fix=False, jobs=jobs, stdin_filename=stdin_filename,
            quiet=quiet, no_cache=no_cache, changed=changed_since, shard=shard, keep_text=add_noqa, edits=edits,
        )
    except ConfigError as exc:
        error(str(exc))
        return 2
    findings = outcome.findings
    if add_noqa:
        return _add_noqa(outcome, quiet)
    if statistics:
        echo(text.statistics(findings), nl=False)
    elif output_format is OutputFormat.text:
        echo(text.render(findings, show_fixes=show_fixes), nl=False)
    else:
        from jaxfix.report import github, jsonfmt, sarif

        renderer = {OutputFormat.json: jsonfmt, OutputFormat.sarif: sarif, OutputFormat.github: github}[output_format]
        echo(renderer.render(findings), nl=False)
    had_errors = report_errors(outcome)
    if output_format is OutputFormat.text and not statistics and not quiet:
        def unsafe_enabled(finding) -> bool:  # asked only of findings with an unsafe fix
            return unsafe_fixes if unsafe_fixes is not None else configs.for_path(finding.path).unsafe_fixes

        hidden = sum(item.result.hidden_preview for item in outcome.files)
        echo(text.summary(
            findings, errors=len(outcome.file_errors), unsafe_enabled=unsafe_enabled, hidden_preview=hidden,
        ), nl=False, err=True)
    return 2 if had_errors else (1 if findings else 0)


def _add_noqa(outcome: BatchOutcome, quiet: bool) -> int:
    from jaxfix.engine import write_policy
    from jaxfix.engine.noqa import add_noqa

    problems = [*outcome.errors, *outcome.file_errors]
    total = skipped = 0
    for item in outcome.files:
        result = item.result
        if not result.findings or item.original_bytes is None:
            continue
        if result.path.endswith(".ipynb"):  # its text is the notebook's JSON, not its cells
            problems.append(f"{result.path}: --add-noqa does not edit notebooks; add `# noqa: CODE` in the cell")
            continue
        new_text, added, missed = add_noqa(result.source, result.findings)
        skipped += missed
        if new_text != result.source:
            problem = write_policy.write_fixed(item, new_text)
            if problem:
                problems.append(problem)
            else:
                total += added
    for line in problems:
        error(line)
    if not quiet:
        echo(f"Added noqa to {total} line{'s' if total != 1 else ''}.", err=True)
        if skipped:
            echo(f"{skipped} finding(s) sit inside multi-line strings and were left as they are.", err=True)
    return 2 if problems else 0


# -- the command line ------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One spelling of an option of `check`: the parameter it sets and how it reads its value."""

    param: str
    kind: type  # str, int, float, Path, bool (a flag) or OutputFormat
    many: bool = False  # repeatable: the parameter is a list
    flag_value: bool = True  # what a flag spelling sets
    minimum: float | None = None
    maximum: float | None = None


POSITIONAL = "paths"
CHECK_DEFAULTS: dict[str, Any] = {
    "select": None, "ignore": None, "config": None, "output_format": OutputFormat.text, "statistics": False,
    "jobs": None, "stdin_filename": None, "quiet": False, "no_cache": False, "changed_since": None, "shard": None,
    "add_noqa": False, "fix_": False, "unsafe_fixes": None, "diff": False, "show_fixes": False, "watch": False,
    "allow_dirty": False, "preview": None,
}
CHECK_OPTIONS: dict[str, Option] = {
    "--select": Option("select", str, many=True),
    "--ignore": Option("ignore", str, many=True),
    "--config": Option("config", Path),
    "--output-format": Option("output_format", OutputFormat),
    "--statistics": Option("statistics", bool),
    "--jobs": Option("jobs", int, minimum=1),
    "-j": Option("jobs", int, minimum=1),
    "--stdin-filename": Option("stdin_filename", str),
    "--quiet": Option("quiet", bool),
    "-q": Option("quiet", bool),
    "--no-cache": Option("no_cache", bool),
    "--changed-since": Option("changed_since", str),
    "--shard": Option("shard", str),
    "--add-noqa": Option("add_noqa", bool),
    "--fix": Option("fix_", bool),
    "--no-fix": Option("fix_", bool, flag_value=False),
    "--unsafe-fixes": Option("unsafe_fixes", bool),
    "--no-unsafe-fixes": Option("unsafe_fixes", bool, flag_value=False),
    "--diff": Option("diff", bool),
    "--show-fixes": Option("show_fixes", bool),
    "--watch": Option("watch", bool),
    "-w": Option("watch", bool),
    "--allow-dirty": Option("allow_dirty", bool),
    "--preview": Option("preview", bool),
    "--no-preview": Option("preview", bool, flag_value=False),
}
# Options the typer-free path leaves to `jaxfix.cli.check` (they run `fix` or a watch loop).
FOR_TYPER = ("fix_", "diff", "watch")


def parse_check_line(args: list[str], options: dict[str, Option] | None = None, defaults=None) -> dict[str, Any] | None:
    """The keyword arguments typer would call `check` with for the command line `args`, or None
    when the line is anything but plain (`--help`, an unknown option, a missing or invalid value,
    bundled short flags): typer then parses it and reports what it must."""
    options = CHECK_OPTIONS if options is None else options
    values: dict[str, Any] = {**(CHECK_DEFAULTS if defaults is None else defaults), POSITIONAL: []}
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if token == "--":
            values[POSITIONAL].extend(rest)
            break
        if token == "-" or not token.startswith("-"):
            values[POSITIONAL].append(token)
            continue
        spelling, equals, attached = token.partition("=") if token.startswith("--") else (token[:2], "", token[2:])
        option = options.get(spelling)
        if option is None:
            return None
        if option.kind is bool:
            if equals or attached:
                return None
            values[option.param] = option.flag_value
            continue
        if equals or attached:
            raw = attached
        elif rest:
            raw = rest.pop(0)
        else:
            return None
        value = _plain_value(option, raw)
        if value is None:
            return None
        values[option.param] = [*(values[option.param] or ()), value] if option.many else value
    if not values[POSITIONAL]:
        return None
    return values


def _plain_value(option: Option, raw: str) -> Any:
    """`raw` as `option` takes it; None unless plainly valid (typer then says why)."""
    kind = option.kind
    if kind is str:
        return raw
    if kind is Path:
        return Path(raw) if raw else None
    if isinstance(kind, type) and issubclass(kind, Enum):
        return next((member for member in kind if member.value == raw), None)
    if kind is int or kind is float:
        try:
            value = kind(raw)
        except ValueError:
            return None
        low, high = option.minimum, option.maximum
        return None if (low is not None and value < low) or (high is not None and value > high) else value
    return None


def main_plain(args: list[str]) -> None:
    """Run a plain `check` line (`args` after `check`) and exit; return when the line is for typer
    to parse (not plain, or found wrong while running: typer then reports it with the usage)."""
    kwargs = parse_check_line(args)
    if kwargs is None or any(kwargs[name] for name in FOR_TYPER):
        return
    kwargs = {k: v for k, v in kwargs.items() if k not in ("allow_dirty", *FOR_TYPER)}
    try:
        code = check(**kwargs)
    except UsageError:
        return
    except KeyboardInterrupt:
        sys.exit(130)  # as typer does
    hard_exit(code)


def hard_exit(code: int) -> None:
    """Exit with `code` once the output is flushed, without tearing down the heap: freeing a
    large run's objects one by one (its project index, its results) cost 0.07-0.2 s after a cold
    check of the jax/flax/optax corpus. Nothing is left to do by then (the pool is shut down, the
    cache written); callers that stay in the process use `check`, which returns the code."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken pipe: nothing more can be written anyway
        pass
    os._exit(code)
