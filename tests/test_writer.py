import os
import stat

import pytest

from jaxfix.engine.writer import WriteError, write_atomic


def test_write_keeps_mode_and_leaves_no_temp(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o751)
    write_atomic(path, b"new\n", expected_old=b"old\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


def test_file_changed_meanwhile_is_not_written(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"edited by the user\n")
    with pytest.raises(WriteError, match="changed"):
        write_atomic(path, b"new\n", expected_old=b"old\n")
    assert path.read_bytes() == b"edited by the user\n"


def test_unwritable_folder_leaves_file_unchanged(tmp_path, monkeypatch):
    # Root ignores folder permissions, so a read-only folder is simulated where it bites:
    # creating the temporary file beside the target.
    import tempfile

    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(WriteError, match="Permission denied"):
        write_atomic(path, b"new\n")
    assert path.read_bytes() == b"old\n"


def test_failing_write_leaves_file_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(WriteError, match="No space left"):
        write_atomic(path, b"new\n")
    assert path.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]
