"""`jaxfix explain -- CMD [ARGS...]`: run a program with JAX's trace/compile monitoring on and join
each recompilation with the jaxfix finding that removes it.

- `run`: runs the command with the monitor (`_bootstrap/sitecustomize.py`) injected;
- `events`: turns the monitor's events into per-function counts and recompilation causes;
- `join`: analyzes the user's files named by the causes and matches findings to them;
- `render`: the text table and the JSON object;
- `notebook`: `jaxfix explain nb.ipynb` runs the notebook's cells in order, positions by cell.

Exit codes of `explain`: 0 no function of the user's recompiled, 1 some did, 2 the command could
not be run, exited with a non-zero status, timed out or was interrupted (the report is printed
all the same).
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxfix.engine.config import ConfigResolver
from jaxfix.explain import notebook
from jaxfix.explain.events import Collected, collect
from jaxfix.explain.join import Cause, join_all
from jaxfix.explain.run import RunOutcome, run_command


@dataclass
class Explanation:
    run: RunOutcome
    collected: Collected
    causes: dict[tuple, list[Cause]]
    show_all: bool = False

    @property
    def recompiled(self) -> bool:
        return any(f.recompiled for f in self.collected.functions if self.show_all or f.shown_by_default)

    @property
    def exit_code(self) -> int:
        if self.run.returncode is None or self.run.returncode != 0 or self.run.problem:
            return 2
        return 1 if self.recompiled else 0


def explain(
    argv: list[str],
    *,
    timeout: float | None = None,
    show_all: bool = False,
    resolver: ConfigResolver | None = None,
    cwd: str | None = None,
    to_stderr: bool = False,
) -> Explanation:
    run = run_command(notebook.command_for(argv), timeout=timeout, cwd=cwd, to_stderr=to_stderr)
    collected = collect(run.events)
    shown = [f for f in collected.functions if show_all or f.shown_by_default]
    causes = join_all(shown, resolver)
    notebook.place(collected, causes)  # notebook lines as cells: after the join, which reads module lines
    return Explanation(run, collected, causes, show_all)
