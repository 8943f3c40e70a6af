"""Which files are test code: pytest's own conventions, read from the path alone.

A test module builds jitted wrappers on purpose (`jax.jit(lambda ...)` in a test or a test
helper is how a test exercises jit, and each test runs once), so the jit-placement rules leave
test code alone unless asked. Test code is `test_*.py`, `*_test.py`, `conftest.py`, and any
file in a folder named `tests` or `test`.
"""

from __future__ import annotations

from pathlib import PurePath

TEST_FOLDERS = frozenset({"tests", "test"})


def is_test_module(path: str | None) -> bool:
    """`path` names a pytest test module, a `conftest.py`, or a file under a `tests/`/`test/` folder."""
    if not path:
        return False
    p = PurePath(path.replace("\\", "/"))
    name = p.name
    if name == "conftest.py" or (name.startswith("test_") and name.endswith(".py")) or name.endswith("_test.py"):
        return True
    return any(part in TEST_FOLDERS for part in p.parts[:-1])


def is_test_case_base(qualified: str | None) -> bool:
    """A base class that makes its subclasses test cases: `unittest.TestCase`, absl's
    `absltest.TestCase`/`parameterized.TestCase`, `chex.TestCase`, jax's `JaxTestCase`, ...
    (by the last name: it ends with `TestCase`). Their methods are test code wherever the file
    lives (a shared helper module such as `utils/equivalence.py` holding a test base class)."""
    return bool(qualified) and qualified.rpartition(".")[2].endswith("TestCase")
