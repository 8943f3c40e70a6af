"""Writing fixed files without ever losing the user's code.

The new bytes go to a temporary file in the same folder, are flushed to disk, get
the original file's mode, and replace the original with one atomic rename. The
file is re-read first: if it changed since it was analysed, nothing is written.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class WriteError(Exception):
    """The file could not be written; it is unchanged. The message is one line."""


def write_atomic(path: str | Path, data: bytes, *, expected_old: bytes | None = None) -> None:
    path = Path(path)
    try:
        current = path.read_bytes()
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError as exc:
        raise WriteError(f"cannot read before writing: {exc.strerror or exc}") from None
    if expected_old is not None and current != expected_old:
        raise WriteError("file changed while jaxfix was running; not written")
    fd = None
    tmp_name = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".jaxfix-tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            fd = None
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
        tmp_name = None
    except OSError as exc:
        raise WriteError(f"cannot write: {exc.strerror or exc}") from None
    finally:
        if fd is not None:
            os.close(fd)
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
