"""The `jaxfix` command line: check, fix (dry-run diffs, --write), rules, rule, explain.

Exit codes: 0 nothing to report, 1 findings (check) or changes/unfixed findings
(fix), 2 when any file or the config could not be handled. `explain`: 0 no
recompilation, 1 some function of the user's recompiled, 2 the command could not
run, failed, timed out or was interrupted.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from jaxfix import __version__, checkcmd
from jaxfix.batch import BatchOutcome
from jaxfix.checkcmd import OutputFormat
from jaxfix.engine import registry, write_policy
from jaxfix.engine.cache import CACHE_DIR_NAME
from jaxfix.engine.config import ConfigError, ConfigResolver
from jaxfix.engine.runner import FileOutcome
from jaxfix.report import github, jsonfmt, sarif, text

# Imported where used, not here: the rules, libcst and the fixing loop (`fixing`, `ruledocs`,
# `runner.analyze_bytes`), which a `check` answered from the cache never needs.

app = typer.Typer(
    name="jaxfix",
    help="Find, fix and verify JAX jit anti-patterns (recompiling jit wrappers, cached_property on "
    "pytrees, Python control flow on traced values).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"jaxfix {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """jaxfix: JAX jit anti-patterns, found, fixed and verified."""


PathsArg = Annotated[
    Optional[list[str]],
    typer.Argument(metavar="PATHS", help="Files or folders to process (default: `.`); `-` reads standard input.", show_default=False),
]
SelectOpt = Annotated[
    Optional[list[str]],
    typer.Option("--select", metavar="CODES", help="Rule codes or prefixes to enable (replaces config); repeatable."),
]
IgnoreOpt = Annotated[
    Optional[list[str]],
    typer.Option("--ignore", metavar="CODES", help="Rule codes or prefixes to disable (added to config); repeatable."),
]
ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", metavar="FILE", help="Use this pyproject.toml instead of discovering one per file."),
]
JobsOpt = Annotated[
    Optional[int], typer.Option("--jobs", "-j", metavar="N", min=1, help="Worker processes (default: all cores).")
]
StdinNameOpt = Annotated[
    Optional[str],
    typer.Option("--stdin-filename", metavar="PATH", help="Path to report (and to find config from) for `-`."),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar and no summary line.")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help=f"Do not read or write {CACHE_DIR_NAME}/.")]
ChangedSinceOpt = Annotated[
    Optional[str], typer.Option("--changed-since", metavar="REF", help="Only files changed since this git revision.")
]
ShardOpt = Annotated[
    Optional[str], typer.Option("--shard", metavar="K/N", help="Only the K-th of N deterministic slices of the files.")
]
DeviceOpt = Annotated[
    str, typer.Option("--device", help="Where verification runs: auto (best present), cpu, gpu or tpu.")
]
ExamplesOpt = Annotated[
    Optional[Path],
    typer.Option("--examples", help="A Python file declaring inputs: EXAMPLES = {'f': [call(...)]} and/or drive(mod)."),
]
RecordOpt = Annotated[
    Optional[str], typer.Option("--record", metavar="CMD", help="Record calls while CMD (e.g. 'pytest -q') runs the original.")
]
RecordTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--record-timeout", min=1, metavar="S",
        help="Seconds allowed for recording inputs (--record CMD, or the project's tests, doctests and __main__ block).",
    ),
]
VerifyTimeoutOpt = Annotated[
    float, typer.Option("--verify-timeout", min=1, help="Seconds allowed per verified callable.")
]
PreviewOpt = Annotated[
    Optional[bool],
    typer.Option(
        "--preview/--no-preview",
        help="Also report what the rules find on evidence that was mostly wrong on code nobody prepared (docs/preview.md).",
    ),
]
NoRunMainOpt = Annotated[
    bool, typer.Option("--no-run-main", help="Never run the files' `if __name__ == \"__main__\":` blocks for inputs.")
]


def _resolver(
    select, ignore, config: Optional[Path], unsafe_fixes: Optional[bool] = None, preview: Optional[bool] = None
) -> ConfigResolver:
    try:
        return checkcmd.resolver(select, ignore, config, unsafe_fixes, preview)
    except checkcmd.UsageError as exc:
        raise typer.BadParameter(str(exc)) from None


def _run(paths, resolver, **options) -> BatchOutcome:
    try:
        return checkcmd.run(paths, resolver, **options)
    except checkcmd.UsageError as exc:
        raise typer.BadParameter(str(exc)) from None


_catalog_from_cache, _error, _report_errors = checkcmd.catalog_from_cache, checkcmd.error, checkcmd.report_errors


@app.command()
def check(
    paths: PathsArg = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    config: ConfigOpt = None,
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="How to print findings.")] = OutputFormat.text,
    statistics: Annotated[bool, typer.Option("--statistics", help="Print counts per rule instead of findings.")] = False,
    jobs: JobsOpt = None,
    stdin_filename: StdinNameOpt = None,
    quiet: QuietOpt = False,
    no_cache: NoCacheOpt = False,
    changed_since: ChangedSinceOpt = None,
    shard: ShardOpt = None,
    add_noqa: Annotated[
        bool, typer.Option("--add-noqa", help="Add `# noqa: CODE` comments for every current finding.")
    ] = False,
    fix_: Annotated[
        bool, typer.Option("--fix/--no-fix", help="Apply the safe fixes (as `jaxfix fix --write`).")
    ] = False,
    unsafe_fixes: Annotated[
        Optional[bool],
        typer.Option(
            "--unsafe-fixes/--no-unsafe-fixes",
            help="Also the fixes marked unsafe: applied by --fix, shown by --diff, counted as fixable in the summary.",
        ),
    ] = None,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print the fixes as unified diffs, change nothing (as `jaxfix fix`).")
    ] = False,
    show_fixes: Annotated[
        bool, typer.Option("--show-fixes", help="Print each finding's fix under it, and the fixes --fix applied.")
    ] = False,
    watch: Annotated[
        bool, typer.Option("--watch", "-w", help="Check again whenever a file under the paths changes.")
    ] = False,
    allow_dirty: Annotated[
        bool, typer.Option("--allow-dirty", help="With --fix: also write files with unstaged changes or untracked by git.")
    ] = False,
    preview: PreviewOpt = None,
) -> None:
    """Report problems, one line each: `path:line:col: CODE [*] message` ([*] = safe fix available)."""
    paths = paths or ["."]
    if watch:
        _watch(paths, quiet, lambda: check(
            paths, select, ignore, config, output_format, statistics, jobs, stdin_filename, quiet, no_cache,
            changed_since, shard, add_noqa, fix_, unsafe_fixes, diff, show_fixes, watch=False, allow_dirty=allow_dirty,
            preview=preview,
        ))
    if fix_ or diff:
        _fix_from_check(
            paths, write=fix_ and not diff, unsafe_fixes=unsafe_fixes, select=select, ignore=ignore, config=config,
            jobs=jobs, stdin_filename=stdin_filename, quiet=quiet, no_cache=no_cache, changed_since=changed_since,
            shard=shard, output_format=output_format, show_fixes=show_fixes, allow_dirty=allow_dirty, preview=preview,
        )
    try:
        code = checkcmd.check(
            paths, select=select, ignore=ignore, config=config, output_format=output_format, statistics=statistics,
            jobs=jobs, stdin_filename=stdin_filename, quiet=quiet, no_cache=no_cache, changed_since=changed_since,
            shard=shard, add_noqa=add_noqa, show_fixes=show_fixes, preview=preview, unsafe_fixes=unsafe_fixes,
        )
    except checkcmd.UsageError as exc:
        raise typer.BadParameter(str(exc)) from None
    raise typer.Exit(code)


def _fix_from_check(paths: list[str], **options) -> None:
    """`check --fix` / `check --diff` (Ruff's spellings): `fix --write` / `fix`, same output."""
    fix(
        paths, write=options["write"], unsafe_fixes=options["unsafe_fixes"], select=options["select"],
        ignore=options["ignore"], config=options["config"], jobs=options["jobs"],
        stdin_filename=options["stdin_filename"], quiet=options["quiet"], no_cache=options["no_cache"],
        changed_since=options["changed_since"], shard=options["shard"], allow_dirty=options["allow_dirty"], report=None,
        verify=False, device="auto", examples=None, record=None, record_timeout=180.0, verify_timeout=60.0,
        output_format=options["output_format"], show_fixes=options["show_fixes"], preview=options["preview"],
    )


def _watch(paths: list[str], quiet: bool, run: Callable[[], None]) -> None:
    """Run `run` (one check), then again after every change of a Python file or config under
    `paths`, until interrupted (Ctrl-C). `watchfiles` waits for the changes (inotify, not polling)."""
    import watchfiles

    def once() -> None:
        try:
            run()
        except typer.Exit:
            pass
        if not quiet:
            typer.echo("Watching for file changes (Ctrl-C to stop).", err=True)

    def wanted(_change, path: str) -> bool:
        return path.endswith((".py", ".pyi", ".ipynb", "pyproject.toml")) and CACHE_DIR_NAME not in path

    once()
    try:
        for _changes in watchfiles.watch(*[p for p in paths if p != "-"], watch_filter=wanted, raise_interrupt=False):
            if sys.stderr.isatty():
                typer.echo("\x1b[2J\x1b[H", nl=False, err=True)  # a clear screen per run, as Ruff does
            once()
    except KeyboardInterrupt:
        pass
    raise typer.Exit(0)


VERIFY_EXTRA = 'jaxfix: verification needs jax and numpy ({missing} missing): pip install "jaxfix[verify]"'


def _require_verify_extra() -> None:
    """Exit 2 with one line naming the install command when the `verify` extra is not installed.

    Checked before any work: without it the verifier's first numpy import ends in a traceback
    and exit 1, which is the documented "mismatch" code.
    """
    import importlib.util

    missing = []
    try:
        import numpy  # noqa: F401
    except ImportError:
        missing.append("numpy")
    try:
        if importlib.util.find_spec("jax") is None:
            missing.append("jax")
    except (ImportError, ValueError):
        missing.append("jax")
    if missing:
        typer.echo(VERIFY_EXTRA.format(missing=" and ".join(missing)), err=True)
        raise typer.Exit(2)


def _verify_changed(
    items: list[FileOutcome], device: str, examples, record, timeout: float, record_timeout: float = 180.0, run_main: bool = True
) -> None:
    """Attach differential-execution evidence to every applied fix of the changed files; before
    running the user's code for inputs, say which code and the time limit (on stderr)."""
    try:
        from jaxfix.verify.api import verify_results
    except ImportError as exc:
        typer.echo(VERIFY_EXTRA.format(missing=getattr(exc, "name", None) or "a module"), err=True)
        raise typer.Exit(2)
    verifications = verify_results(  # the project's tests run once for all the changed files
        [item.result for item in items], device=device, examples=str(examples) if examples else None, record_cmd=record,
        timeout=timeout, record_timeout=record_timeout, run_main=run_main, announce=lambda line: typer.echo(line, err=True),
    )
    for item, verification in zip(items, verifications):
        for note in verification.notes:  # where the inputs came from: one line per source that ran
            typer.echo(f"{item.result.path}: {note}", err=True)
        item.result.fixes_applied = verification.findings


def _verified_part(result, resolver):
    """The file with only its verified fixes applied (`verify.apart.verified_part`), or None."""
    from jaxfix.verify.apart import verified_part

    try:
        return verified_part(result, resolver.for_path(result.path))
    except ConfigError:
        return None


def _left_in(path: str, text: str, resolver, held_codes: set[str]) -> list:
    """The findings of `text` (the file as it is written) under the file's own settings, less the
    held-back fixes (the held-back line names them): what remains is what `fix` leaves alone."""
    from jaxfix.engine.fixing import fix_is_wanted
    from jaxfix.verify.apart import findings_in

    config = resolver.for_path(path)
    return [
        f for f in findings_in(path, text, config)
        if not (f.code in held_codes and fix_is_wanted(f, config.unsafe_fixes))
    ]


def _fixes_shown(changed: list[FileOutcome], write: bool) -> str:
    """Ruff's `--show-fixes` listing: per file, how many fixes of each rule were (or would be) applied."""
    from collections import Counter

    if not any(o.result.fixes_applied for o in changed):
        return ""
    lines = [f"{'Fixed' if write else 'Would fix'}:"]
    for item in changed:
        counts = Counter((f.code, f.name) for f in item.result.fixes_applied)
        if counts:
            lines.append(f"- {item.result.path}:")
            lines += [f"    {n} × {code} ({name})" for (code, name), n in sorted(counts.items())]
    return "\n".join(lines) + "\n"


def _fix_summary(changed: list[FileOutcome], remaining: list, write: bool) -> str:
    fixed = sum(len(o.result.fixes_applied) for o in changed)
    verb = "Fixed" if write else "Would fix"
    summary = f"{verb} {fixed} problem{'s' if fixed != 1 else ''} in {len(changed)} file{'s' if len(changed) != 1 else ''}"
    if remaining:
        from jaxfix.engine.fixing import fix_is_wanted

        unsafe = sum(1 for f in remaining if fix_is_wanted(f, unsafe_fixes=True))
        summary += f"; {len(remaining)} remaining" + (f" ({unsafe} with --unsafe-fixes)" if unsafe else "")
    return summary + "."


@app.command()
def fix(
    paths: PathsArg = None,
    write: Annotated[bool, typer.Option("--write", help="Apply the fixes to the files (default: print diffs only).")] = False,
    unsafe_fixes: Annotated[
        Optional[bool], typer.Option("--unsafe-fixes/--no-unsafe-fixes", help="Also apply fixes marked unsafe.")
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    config: ConfigOpt = None,
    jobs: JobsOpt = None,
    stdin_filename: StdinNameOpt = None,
    quiet: QuietOpt = False,
    no_cache: NoCacheOpt = False,
    changed_since: ChangedSinceOpt = None,
    shard: ShardOpt = None,
    allow_dirty: Annotated[
        bool, typer.Option("--allow-dirty", help="Also write files with unstaged changes or untracked by git.")
    ] = False,
    report: Annotated[
        Optional[Path], typer.Option("--report", help="Write a migration report (.md or .json) to this path.")
    ] = None,
    verify: Annotated[
        bool, typer.Option("--verify", help="Run old and new code side by side; with --write, write only verified fixes.")
    ] = False,
    device: DeviceOpt = "auto",
    examples: ExamplesOpt = None,
    record: RecordOpt = None,
    record_timeout: RecordTimeoutOpt = 180.0,
    verify_timeout: VerifyTimeoutOpt = 60.0,
    no_run_main: NoRunMainOpt = False,
    output_format: Annotated[
        OutputFormat,
        typer.Option("--output-format", help="text: diffs (and evidence); json: one document (jaxfix.report.fix_schema); sarif; github."),
    ] = OutputFormat.text,
    show_fixes: Annotated[bool, typer.Option("--show-fixes", help="List the fixes applied, per file and rule.")] = False,
    preview: PreviewOpt = None,
) -> None:
    """Show the fixes as unified diffs (a dry run), or apply them with --write."""
    paths = paths or ["."]
    text_out = output_format is OutputFormat.text
    if not text_out and paths == ["-"] and write:
        _error("`fix - --write` prints the fixed source; it cannot also print --output-format " + output_format.value)
        raise typer.Exit(2)
    if verify:
        _require_verify_extra()
    _catalog_from_cache(no_cache)
    try:
        resolver = _resolver(select, ignore, config, unsafe_fixes, preview)
        outcome = _run(
            paths, resolver, fix=True, jobs=jobs, stdin_filename=stdin_filename,
            quiet=quiet, no_cache=no_cache, changed=changed_since, shard=shard,
        )
    except ConfigError as exc:
        _error(str(exc))
        raise typer.Exit(2)
    changed = [o for o in outcome.files if o.result.changed]
    write_errors: list[str] = []
    not_written: set[str] = set()
    if write and not allow_dirty and paths != ["-"]:
        allowed, write_errors = write_policy.refuse_dirty(changed)
        not_written.update(o.result.path for o in changed if o not in allowed)
        changed = allowed
    held: list[str] = []
    judged: list = []  # the fixes of files written with only their verified fixes, as verified
    held_paths: set[str] = set()
    written: set[str] = set()
    if verify:
        from jaxfix.verify import report as verify_report

        _verify_changed(changed, device, examples, record, verify_timeout, record_timeout, run_main=not no_run_main)
    for item in changed:
        result = item.result
        if verify and write and not write_policy.all_verified(result.fixes_applied):
            part = _verified_part(result, resolver)
            held.append(write_policy.held_back(result.path, result.fixes_applied, written=part is not None))
            if text_out:
                typer.echo(verify_report.evidence_lines(result.fixes_applied), nl=False, err=True)
            if part is None:
                held_paths.add(result.path)
                if paths == ["-"]:
                    sys.stdout.write(result.source)
                continue
            # the verified fixes alone (they apply without the held-back ones): written as a file of its own
            judged.extend(result.fixes_applied)  # the summary counts every verdict, the held-back ones too
            held_codes = {f.code for f in result.fixes_applied} - {f.code for f in part.fixes_applied}
            result.fixed_source, result.fixes_applied = part.fixed_source, part.fixes_applied
            result.remaining = result.remaining_in_source = _left_in(result.path, part.fixed_source, resolver, held_codes)
        if paths == ["-"] and write:
            sys.stdout.write(result.fixed_source)
        elif write:
            problem = write_policy.write_fixed(item)
            if problem:
                write_errors.append(problem)
                not_written.add(result.path)
            else:
                written.add(result.path)
        elif text_out:
            from jaxfix.report.diff import unified_diff

            typer.echo(unified_diff(result.path, result.source, result.fixed_source), nl=False)
            if verify:
                typer.echo(verify_report.evidence_lines(result.fixes_applied), nl=False)
    for line in held:
        typer.echo(line, err=True)
    shown_fixed = written | ({o.result.path for o in changed} - held_paths if paths == ["-"] and write else set())
    _place_remaining(outcome, shown_fixed)
    all_changed = changed
    changed = [o for o in changed if o.result.path not in held_paths]
    remaining = [f for o in outcome.files for f in o.result.remaining]
    if text_out and remaining:
        typer.echo(text.render(remaining), nl=False)
    elif not text_out:
        _print_fix_run(
            output_format, outcome, all_changed, write=write, verify=verify, written=written,
            held_back=not_written | held_paths, errors=[*write_errors, *outcome.errors, *outcome.file_errors],
        )
    if report is not None:
        from jaxfix.report.migration import write_report

        write_report(report, [o.result for o in outcome.files], written=write, not_written=frozenset(not_written | held_paths))
    for line in write_errors:
        _error(line)
    had_errors = _report_errors(outcome) or bool(write_errors)
    if show_fixes and text_out:
        typer.echo(_fixes_shown(changed, write), nl=False, err=True)
    if not quiet:  # the summary closes the output, after the `error:` lines (as Ruff's does)
        typer.echo(_fix_summary(changed, remaining, write), err=True)
    if verify and not quiet:
        typer.echo(verify_report.summary([*judged, *(f for o in outcome.files for f in o.result.fixes_applied)]), nl=False, err=True)
    if had_errors:
        raise typer.Exit(2)
    raise typer.Exit(1 if remaining or held or (changed and not write) else 0)


def _place_remaining(outcome: BatchOutcome, shown_fixed: set[str]) -> None:
    """Remaining findings at their lines in the text the user has: the fixed text where it was
    written (or printed), else the file on disk, which the fixes did not change."""
    for item in outcome.files:
        if item.result.path not in shown_fixed:
            item.result.remaining = item.result.remaining_in_source


def _print_fix_run(output_format: OutputFormat, outcome: BatchOutcome, changed: list[FileOutcome], **run) -> None:
    """`fix` in a machine format: the applied fixes (with evidence) and the remaining findings."""
    from jaxfix.report import fixdoc

    results = [o.result for o in outcome.files]
    applied = fixdoc.applied(o.result for o in changed)
    remaining = [f for r in results for f in r.remaining]
    if output_format is OutputFormat.json:
        fix_run = fixdoc.FixRun(
            results, run["write"], run["verify"], frozenset(run["written"]), frozenset(run["held_back"]), tuple(run["errors"])
        )
        typer.echo(fixdoc.render(fix_run), nl=False)
    elif output_format is OutputFormat.sarif:
        typer.echo(sarif.render(remaining, applied=applied), nl=False)
    else:
        typer.echo(github.render_applied(applied) + github.render(remaining), nl=False)


@app.command("verify")
def verify_command(
    paths: PathsArg = None,
    device: DeviceOpt = "auto",
    examples: ExamplesOpt = None,
    record: RecordOpt = None,
    record_timeout: RecordTimeoutOpt = 180.0,
    verify_timeout: VerifyTimeoutOpt = 60.0,
    no_run_main: NoRunMainOpt = False,
    base: Annotated[
        Optional[str], typer.Option("--base", metavar="REF", help="Verify your own edit: PATH against itself at git commit REF.")
    ] = None,
    original: Annotated[
        Optional[Path], typer.Option("--original", metavar="FILE", help="Verify your own edit: PATH against FILE.")
    ] = None,
    unsafe_fixes: Annotated[
        Optional[bool], typer.Option("--unsafe-fixes/--no-unsafe-fixes", help="Also verify fixes marked unsafe.")
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    config: ConfigOpt = None,
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="How to print the evidence.")] = OutputFormat.text,
    quiet: QuietOpt = False,
    preview: PreviewOpt = None,
) -> None:
    """Compute the fixes, run old and new code on the same inputs, and report per fix: verified, mismatch
    or unverifiable. Nothing is written. Exit 1 when any fix mismatches. With --base/--original, verify
    the edit you made yourself instead (docs/verify.md)."""
    paths = paths or ["."]
    _require_verify_extra()
    if base is not None or original is not None:
        from jaxfix.verify.edit import verify_edits

        raise typer.Exit(verify_edits(
            [str(p) for p in paths], base=base, original=str(original) if original else None, echo=typer.echo,
            device=device, examples=str(examples) if examples else None, record_cmd=record, timeout=verify_timeout,
            record_timeout=record_timeout, run_main=not no_run_main,
            announce=lambda line: typer.echo(line, err=True),
        ))
    try:
        outcome = _run(
            paths, _resolver(select, ignore, config, unsafe_fixes, preview), fix=True, jobs=None, stdin_filename=None,
            quiet=True, no_cache=True,
        )
    except ConfigError as exc:
        _error(str(exc))
        raise typer.Exit(2)
    from jaxfix.verify import report as verify_report

    changed = [o for o in outcome.files if o.result.changed]
    _verify_changed(changed, device, examples, record, verify_timeout, record_timeout, run_main=not no_run_main)
    findings = [f for o in changed for f in o.result.fixes_applied]
    if output_format is OutputFormat.text:
        typer.echo(verify_report.evidence_lines(findings, indent=""), nl=False)
    elif output_format is OutputFormat.json:
        typer.echo(jsonfmt.render(findings), nl=False)
    elif output_format is OutputFormat.sarif:
        typer.echo(sarif.render([], applied=findings), nl=False)
    else:
        typer.echo(github.render_applied(findings), nl=False)
    if not quiet:
        typer.echo(verify_report.summary(findings), nl=False, err=True)
    had_errors = _report_errors(outcome)
    mismatched = any(f.fix.evidence is not None and f.fix.evidence.verdict == "mismatch" for f in findings)
    raise typer.Exit(2 if had_errors else (1 if mismatched else 0))


@app.command("rules")
def list_rules() -> None:
    """List every rule: code, name, fix availability, summary."""
    for _rule, info in registry.all_codes():
        typer.echo(f"{info.code:<7} {info.name:<38} fix: {info.fix:<9} {info.summary}")


@app.command("rule")
def explain_rule(code: Annotated[str, typer.Argument(help="A rule code, e.g. JAX201.")]) -> None:
    """Explain one rule: what goes wrong under jit, a bad and a good example, how the fix decides."""
    found = registry.find_code(code)
    if found is None:
        _error(f"unknown rule code {code!r}; `jaxfix rules` lists them")
        raise typer.Exit(2)
    from jaxfix.ruledocs import render_rule_doc

    typer.echo(render_rule_doc(*found))


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="The pyproject.toml to extend.")] = Path("pyproject.toml"),
    print_only: Annotated[bool, typer.Option("--print", help="Print the section instead of writing it.")] = False,
) -> None:
    """Add a commented [tool.jaxfix] section to pyproject.toml (never replaces existing config)."""
    from jaxfix.init import append_section, config_section, has_section

    if print_only:
        typer.echo(config_section(), nl=False)
        return
    try:
        if path.exists() and has_section(path):
            _error(f"{path}: already has a [tool.jaxfix] section; left unchanged")
            raise typer.Exit(2)
        append_section(path)
    except (OSError, ValueError) as exc:
        _error(f"{path}: {exc}")
        raise typer.Exit(2)
    typer.echo(f"Added [tool.jaxfix] to {path}.", err=True)


@app.command(
    "explain",
    options_metavar="[OPTIONS] -- CMD [ARGS]...",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False},
)
def explain_command(
    ctx: typer.Context,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object (docs/explain.md).")] = False,
    timeout: Annotated[
        Optional[float], typer.Option("--timeout", min=0.1, help="Stop the command after this many seconds.")
    ] = None,
    show_all: Annotated[
        bool, typer.Option("--all", help="Also list JAX's own functions (eager ops) and bodies traced inside jit.")
    ] = False,
    config: ConfigOpt = None,
) -> None:
    """Run a command (`jaxfix explain -- python train.py`) with trace/compile monitoring and print, per
    jitted function, its traces and compiles; for each recompilation, the call that triggered it,
    JAX's reason, and the jaxfix finding that removes it. Exit 0: no recompilation, 1: some, 2: the
    command did not run or failed."""
    from jaxfix.explain import explain
    from jaxfix.explain.render import render_json, render_text

    argv = list(ctx.args)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        _error("no command given; usage: jaxfix explain [--json] [--timeout S] -- python script.py [ARGS...]")
        raise typer.Exit(2)
    try:
        resolver = _resolver(None, None, config)
    except ConfigError as exc:
        _error(str(exc))
        raise typer.Exit(2)
    result = explain(argv, timeout=timeout, show_all=show_all, resolver=resolver, to_stderr=json_output)
    if result.run.returncode is None:
        _error(result.run.problem or "the command did not run")
    render = render_json if json_output else render_text
    sys.stdout.flush()
    typer.echo(render(result.run, result.collected, result.causes, show_all=show_all), nl=False)
    raise typer.Exit(result.exit_code)


@app.command("server", help="Run the language server (stdio); the same as `jaxfix lsp` (Ruff's name for it).")
@app.command("lsp")
def lsp() -> None:
    """Run the language server (stdio) for editor diagnostics and quick fixes; see docs/editors.md."""
    try:
        import pygls  # noqa: F401  (the optional extra `jaxfix[lsp]`)
    except ImportError:
        _error("the language server needs pygls: install jaxfix's `lsp` extra (from a clone: pip install '.[lsp]')")
        raise typer.Exit(2) from None
    from jaxfix.lsp import serve

    serve()


def main() -> None:
    """The command line: `jaxfix.__main__.main` (entry points made before it named this one)."""
    from jaxfix.__main__ import main as entry

    entry()


def check_options(command: Callable = check) -> tuple[dict[str, checkcmd.Option], dict[str, Any]]:
    """(spelling -> `checkcmd.Option`, parameter -> default) as `command`'s typer declarations
    (`Annotated[T, typer.Option(...)]`, read as typer reads them) say: what `checkcmd.CHECK_OPTIONS`
    and `CHECK_DEFAULTS` must be (tests/test_cli.py). Empty when some option is not plain (a
    callback, an environment variable, a prompt, a parser): typer alone can read those."""
    import typing

    from typer.models import ArgumentInfo, OptionInfo
    from typer.utils import get_params_from_function

    options: dict[str, checkcmd.Option] = {}
    defaults: dict[str, Any] = {}
    for name, meta in get_params_from_function(command).items():
        info, kind = meta.default, meta.annotation
        if typing.get_origin(kind) is typing.Union:
            kind = next(t for t in typing.get_args(kind) if t is not type(None))
        if isinstance(info, ArgumentInfo) and name == checkcmd.POSITIONAL and typing.get_origin(kind) is list:
            continue
        if not isinstance(info, OptionInfo) or info.callback or info.envvar or info.prompt or info.parser:
            return {}, {}
        defaults[name] = info.default
        many = typing.get_origin(kind) is list
        base = typing.get_args(kind)[0] if many else kind
        flag = f"--{name.replace('_', '-')}"
        for spelling in info.param_decls or ([f"{flag}/--no-{name.replace('_', '-')}"] if kind is bool else [flag]):
            on, _, off = spelling.partition("/")
            options[on] = checkcmd.Option(name, base, many, True, info.min, info.max)
            if off:
                options[off] = checkcmd.Option(name, base, many, False, info.min, info.max)
    return options, defaults


def plain_arguments(command: Callable, args: list[str]) -> Optional[dict[str, Any]]:
    """`checkcmd.parse_check_line` with the options `command` declares (`check_options`)."""
    options, defaults = check_options(command)
    return checkcmd.parse_check_line(args, options, defaults) if options else None


if __name__ == "__main__":
    main()
