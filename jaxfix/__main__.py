"""The command line's entry (`jaxfix`, `python -m jaxfix`): a plain `check` line runs without
importing typer (`jaxfix.checkcmd`: most runs are cached checks, where typer's import cost a
fifth of the run); anything else goes to typer (`jaxfix.cli.app`)."""

import os
import sys


# Ruff's options that jaxfix spells differently (or leaves to config): a one-line hint, not
# click's "No such option".
RUFF_SPELLINGS = {
    "--extend-select": "`--select` replaces the selection; add codes to `select` in [tool.jaxfix]",
    "--extend-ignore": "`--ignore` (it adds to the configured ignores)",
    "--fix-only": "`jaxfix fix --write` (or `jaxfix check --fix`)",
    "--exit-zero": "nothing: use `|| true`; exit 1 means findings",
    "--format": "`--output-format`",
    "--output-file": "shell redirection (`> file`), or `jaxfix fix --report FILE` for a migration report",
    "--exclude": "`exclude` in [tool.jaxfix] (and .gitignore, which is always respected)",
    "--extend-exclude": "`extend-exclude` in [tool.jaxfix]",
    "--cache-dir": "`--no-cache` (the cache lives in .jaxfix_cache/)",
    "--target-version": "nothing: jaxfix reads any Python 3 the running interpreter parses",
    "--line-length": "nothing: fixes keep the file's style (black-wrapped where new)",
}


def ruff_hint(args: list[str]) -> str | None:
    """The hint for the first Ruff option on the line that jaxfix spells differently."""
    for arg in args:
        if arg == "--":
            return None
        spelling = arg.partition("=")[0]
        if spelling in RUFF_SPELLINGS:
            return f"error: no option {spelling} (Ruff's); in jaxfix: {RUFF_SPELLINGS[spelling]}"
    return None


def main() -> None:
    from jaxfix.engine.runner import tune_gc

    hint = ruff_hint(sys.argv[1:])
    if hint is not None:
        print(hint, file=sys.stderr)
        sys.exit(2)
    tune_gc()
    if sys.argv[1:2] == ["check"] and os.name != "nt":  # on Windows typer expands wildcards in the arguments
        from jaxfix.checkcmd import main_plain

        main_plain(sys.argv[2:])  # exits, unless typer is to parse the line (and report it)
    from jaxfix.cli import app

    app()


if __name__ == "__main__":
    main()
