"""Differential verification: run the original and the rewritten module side by side and compare.

Public API (imported lazily, so a verification child that imports `jaxfix.verify.child` does not
pay for libcst or the rule registry):

- `verify_file_result(result, *, device, examples, record_cmd, timeout) -> list[Finding]`
- `verify_result(result, ...) -> FileVerification` and `verify_change(original, rewritten, path, ...)`
- `call(*args, **kwargs)`: one declared example call, for an `--examples` file
- `compare(expected, got) -> Difference | None`; `compare_trees(..., added_fields=...)` also names
  the leaves a fix adds on purpose
"""

from __future__ import annotations

from typing import Any

from jaxfix.verify.protocol import Call, call

_LAZY = {
    "verify_file_result": "jaxfix.verify.api",
    "verify_result": "jaxfix.verify.api",
    "verify_change": "jaxfix.verify.api",
    "FileVerification": "jaxfix.verify.api",
    "UnitResult": "jaxfix.verify.api",
    "compare": "jaxfix.verify.compare",
    "Difference": "jaxfix.verify.compare",
    "compare_trees": "jaxfix.verify.compare",
    "choose_device": "jaxfix.verify.device",
}

__all__ = ["Call", "call", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'jaxfix.verify' has no attribute {name!r}")
