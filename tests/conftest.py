"""The quick set and the long set.

`python -m pytest -q -n 2` (the README's command) runs the quick set: every test not marked
`long`. `--long` runs the long tests as well (`.ci/run` does). A `-m` expression given on the
command line decides alone (`-m long` runs only the long tests), and a test named by its node id
(`tests/test_x.py::test_y[case]`) runs even when it is long.

What is long, and how a new test lands there without a list being edited: a whole folder
(tests/fuzz/conftest.py marks everything under it), a whole module (`pytestmark =
pytest.mark.long`), one test (`@pytest.mark.long`), or the rest of a sweep over cases
(`long_support.quick_and_long`: the first cases of each family stay quick, a newly added case
is long unless it sorts first in its family).
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="also run the tests marked `long` (fuzzing, every fixture's behaviour run, all editors); .ci/run does",
    )


def _named(config: pytest.Config) -> tuple[str, ...]:
    """The node ids the command line names (`path::name`), relative to the root like `item.nodeid`."""
    named = []
    for arg in config.args:
        if "::" not in arg:
            continue
        path, rest = arg.split("::", 1)
        try:
            path = (Path(config.invocation_params.dir) / path).resolve().relative_to(config.rootpath).as_posix()
        except ValueError:
            continue
        named.append(f"{path}::{rest}")
    return tuple(named)


def _is_named(nodeid: str, named: tuple[str, ...]) -> bool:
    return any(nodeid == n or nodeid.startswith((f"{n}[", f"{n}::")) for n in named)


LEFT_OUT = "jaxfix_long_left_out"  # how many long tests a (worker's) collection left out


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--long") or config.option.markexpr:
        return
    named = _named(config)
    quick, long = [], []
    for item in items:
        if item.get_closest_marker("long") is None or _is_named(item.nodeid, named):
            quick.append(item)
        else:
            long.append(item)
    setattr(config, LEFT_OUT, len(long))
    if hasattr(config, "workeroutput"):  # a pytest-xdist worker: its controller reports the count
        config.workeroutput[LEFT_OUT] = len(long)
    if long:
        config.hook.pytest_deselected(items=long)
        items[:] = quick


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """pytest-xdist's controller: every worker collects the same tests, so any one's count will do."""
    count = getattr(node, "workeroutput", {}).get(LEFT_OUT)
    if count is not None:
        setattr(node.config, LEFT_OUT, count)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    count = getattr(config, LEFT_OUT, 0)
    if count:
        terminalreporter.write_line(
            f"{count} tests marked `long` were left out; add --long to run them too (.ci/run does)"
        )
