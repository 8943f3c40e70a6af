"""The command line's entry (`jaxfix`, `python -m jaxfix`): a plain `check` line runs without
importing typer (`jaxfix.checkcmd`: most runs are cached checks, where typer's import cost a
fifth of the run); anything else goes to typer (`jaxfix.cli.app`)."""

import os
import sys


def main() -> None:
    from jaxfix.engine.runner import tune_gc

    tune_gc()
    if sys.argv[1:2] == ["check"] and os.name != "nt":  # on Windows typer expands wildcards in the arguments
        from jaxfix.checkcmd import main_plain

        main_plain(sys.argv[2:])  # exits, unless typer is to parse the line (and report it)
    from jaxfix.cli import app

    app()


if __name__ == "__main__":
    main()
