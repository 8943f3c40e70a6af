"""Inputs for differential execution, in order of preference.

1. **Recorded** (`--record "CMD"`): the user's command (say `pytest -q tests/`) runs against the
   original code with a recorder (`jaxfix/verify/_recorder/sitecustomize.py`) that wraps every
   changed callable when its module is imported and keeps up to K calls each: jax arrays as NumPy
   data with dtype and weak type, NumPy arrays as NumPy, static values as they are. Calls made
   inside a trace (tracer arguments) are skipped: they have no values.
2. **Declared examples**: a Python file given with `--examples FILE`. It may define
   - `EXAMPLES = {"f": [call(x, n=3), ...], "Model.loss": lambda mod: [call(mod.Model(...))]}`:
     per callable (qualname as in the module), a list of `jaxfix.verify.call(...)` (or tuples of
     positional arguments), or a function of the loaded module returning one (to build instances
     of the module's own classes; a method's or property's first argument is the instance);
   - `examples(mod) -> dict` returning the same table;
   - `drive(mod) -> dict[str, object]`: a driver that exercises the module as a whole and returns
     named outputs (the fixture contract); it covers module-level code and classes too.
   A drive may also set `EXPECT_COMPILES = (before, after)` (compiles in its second run, checked
   by the fixture tests), `REFERENCE = "eager" | "as-written"` (overrides the rule's reference;
   for cases no rule owns), and name an output `"improves:..."` with the value
   `"CRASH:<ExceptionName>"` where the code raised: original CRASH vs a value is a repair (reported,
   not compared), a CRASH in the rewrite where the original had a value is a mismatch.
   The file runs in each child, after the module under test is loaded under its own name, so
   `from mypkg.model import Model` in it gets the version being verified.
3. **Zero configuration** (neither of the above given): the project's pytest tests that reach the
   changed module, its doctests and its `__main__` block, recorded the same way (`gather.py`,
   `suite.py`, `_recorder/run_main.py`).
4. **Synthesized** from annotations (`synthesize.py`, re-exported here), screened on the original
   when the callable has a `while` loop (`screen.py`).

This module keeps the declared-examples reader; recording lives in `recording.py`.
"""

from __future__ import annotations

import ast
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from jaxfix.verify.protocol import Call
from jaxfix.verify.synthesize import (  # noqa: F401 - synthesis lives in synthesize.py
    ARRAY_NAMES,
    DIM_SIZES,
    JAXTYPING_DTYPES,
    MAX_SYNTHESIZED,
    NUMPY_NAMES,
    CannotSynthesize,
    Context,
    candidates,
    synthesize,
)


def pickled(calls: list[Call]) -> bytes:
    return pickle.dumps([pickle.dumps(c) for c in calls])


# -- declared examples ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ExamplesFile:
    path: str
    source: str
    has_drive: bool
    has_table: bool  # EXAMPLES or examples(mod)
    static_keys: frozenset[str] | None  # keys of a literal EXAMPLES dict, when known without running it
    expect_compiles: tuple[int, int] | None = None
    reference: str | None = None  # an explicit REFERENCE = "eager" | "as-written"

    def covers(self, qualname: str) -> bool:
        if not self.has_table:
            return False
        return self.static_keys is None or qualname in self.static_keys


def read_examples(path: str | os.PathLike) -> ExamplesFile:
    """Read (without running) what an examples/drive file declares."""
    source = Path(path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    has_drive = has_table = False
    keys: frozenset[str] | None = None
    expect = reference = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            has_drive |= node.name == "drive"
            has_table |= node.name == "examples"
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not isinstance(target, ast.Name) or node.value is None:
                    continue
                if target.id == "EXAMPLES":
                    has_table = True
                    if isinstance(node.value, ast.Dict) and all(
                        isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.value.keys
                    ):
                        keys = frozenset(k.value for k in node.value.keys)  # type: ignore[union-attr]
                elif target.id == "EXPECT_COMPILES":
                    value = ast.literal_eval(node.value)
                    expect = (int(value[0]), int(value[1]))
                elif target.id == "REFERENCE":
                    reference = ast.literal_eval(node.value)
    return ExamplesFile(str(path), source, has_drive, has_table, keys, expect, reference)


# -- recording: jaxfix/verify/recording.py (kept importable from here) ------------------------------

from jaxfix.verify.recording import RECORDER_DIR, Recording, record_calls  # noqa: F401
