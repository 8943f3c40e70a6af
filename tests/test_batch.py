"""Batch migration over real trees: cache, changed-since, shards, dirty files, reports, interruption."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from test_cli import CLEAN, JIT_IN_LOOP
from typer.testing import CliRunner

from jaxfix.batch import in_shard, parse_shard
from jaxfix.cli import app


def cli(*args, cwd=None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, list(args))
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repo(tmp_path, count=4):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    for i in range(count):
        (tmp_path / f"m{i}.py").write_text(JIT_IN_LOOP if i % 2 == 0 else CLEAN)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "init")
    return tmp_path


def test_second_run_reads_the_cache(tmp_path):
    make_repo(tmp_path)
    cache = tmp_path / ".jaxfix_cache"
    first = cli("check", ".", "-q", cwd=tmp_path)
    # one file holds every result (the run writes it once, not one file per checked file)
    assert not list(cache.glob("*/*.pickle"))
    pack = cache / "results-pack.pickle"
    stamp = pack.stat().st_mtime_ns
    second = cli("check", ".", "-q", cwd=tmp_path)
    assert first == second and first[0] == 1
    assert pack.stat().st_mtime_ns == stamp  # a warm run leaves the pack as it is
    (tmp_path / "m1.py").write_text(JIT_IN_LOOP)  # a changed file is analysed again
    third = cli("check", ".", "-q", cwd=tmp_path)
    assert third[1].count("\n") == first[1].count("\n") + 1
    assert cli("check", ".", "-q", "--no-cache", cwd=tmp_path)[1] == third[1]


def test_a_text_check_and_a_json_one_keep_their_own_results(tmp_path):
    """A text check builds no edits (`Fix.built`): its cached results do not serve a json check,
    which shows them, and both stay in the pack."""
    make_repo(tmp_path)
    cache = tmp_path / ".jaxfix_cache"
    fresh = cli("check", ".", "-q", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert cli("check", ".", "-q", cwd=tmp_path)[0] == 1
    cached = cli("check", ".", "-q", "--output-format", "json", cwd=tmp_path)
    assert cached == fresh and all(f["fix"]["edits"] for f in json.loads(cached[1]))
    assert packed_files(cache) == sorted(2 * ["m0.py", "m1.py", "m2.py", "m3.py"])
    assert cli("check", ".", "-q", "--output-format", "json", cwd=tmp_path) == fresh


def packed_files(cache):
    from jaxfix.engine.cache import load_for_this_code

    return sorted(os.path.basename(path) for (path, _), _ in load_for_this_code(cache / "results-pack.pickle").values())


def test_the_pack_keeps_the_files_other_runs_checked(tmp_path):
    make_repo(tmp_path)
    cache = tmp_path / ".jaxfix_cache"
    first = cli("check", ".", "-q", cwd=tmp_path)
    assert packed_files(cache) == ["m0.py", "m1.py", "m2.py", "m3.py"]
    (tmp_path / "m2.py").write_text(CLEAN)
    assert cli("check", "m2.py", "-q", cwd=tmp_path)[0] == 0  # a run over one file: its new result...
    assert packed_files(cache) == ["m0.py", "m1.py", "m2.py", "m3.py"]  # ...and the others' kept
    (tmp_path / "m2.py").write_text(JIT_IN_LOOP)
    assert cli("check", ".", "-q", cwd=tmp_path) == first
    (tmp_path / "m3.py").unlink()  # a file gone: its entry goes with the next write
    (tmp_path / "m1.py").write_text(JIT_IN_LOOP)
    changed = cli("check", "m1.py", "-q", cwd=tmp_path)
    assert changed[0] == 1 and packed_files(cache) == ["m0.py", "m1.py", "m2.py"]
    assert cli("check", "m1.py", "-q", "--no-cache", cwd=tmp_path) == changed


def test_changed_since_only_processes_changed_files(tmp_path):
    make_repo(tmp_path)
    (tmp_path / "m1.py").write_text(JIT_IN_LOOP)
    code, out, _ = cli("check", ".", "-q", "--changed-since", "HEAD", "--no-cache", cwd=tmp_path)
    assert code == 1 and {line.split(":")[0] for line in out.splitlines()} == {"m1.py"}
    code, _, err = cli("check", ".", "--changed-since", "no-such-ref", cwd=tmp_path)
    assert code == 2 and "no-such-ref" in err


def test_shards_partition_the_files(tmp_path):
    make_repo(tmp_path, count=10)
    outs = [cli("check", ".", "-q", "--no-cache", "--shard", f"{k}/3", cwd=tmp_path)[1] for k in (1, 2, 3)]
    whole = cli("check", ".", "-q", "--no-cache", cwd=tmp_path)[1]
    assert sorted("".join(outs).splitlines()) == sorted(whole.splitlines())
    assert parse_shard("2/3") == (2, 3)
    from pathlib import Path

    assert sum(in_shard(Path("a/b.py"), (k, 4)) for k in (1, 2, 3, 4)) == 1


def test_dirty_files_are_refused_unless_allowed(tmp_path):
    make_repo(tmp_path)
    dirty = tmp_path / "m2.py"
    dirty.write_text(JIT_IN_LOOP + "\n# local edit\n")
    code, _, err = cli("fix", ".", "--write", "--no-cache", cwd=tmp_path)
    assert code == 2 and "m2.py: has changes not staged for commit" in err
    in_loop = "jax.jit(lambda v: v * 2.0)(x)"
    assert dirty.read_text().endswith("# local edit\n") and in_loop in dirty.read_text()
    assert in_loop not in (tmp_path / "m0.py").read_text()  # the clean file was fixed
    code, _, _ = cli("fix", ".", "--write", "--no-cache", "--allow-dirty", cwd=tmp_path)
    assert code == 0 and in_loop not in dirty.read_text()


def test_report_json_and_markdown(tmp_path):
    make_repo(tmp_path)
    cli("fix", ".", "--no-cache", "--report", "report.json", cwd=tmp_path)
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["mode"] == "dry-run"
    (code, row), = [(c, r) for c, r in data["per_rule"].items()]
    assert code.startswith("JAX2") and row["found"] == 2 and row["fixed"] == 2
    assert set(data["per_file"]) == {"m0.py", "m2.py"}
    cli("fix", ".", "--no-cache", "--report", "report.md", cwd=tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "## Per rule" in text and "## Manual follow-ups" in text


def test_killed_write_leaves_every_file_old_or_new(tmp_path):
    originals = {}
    for i in range(60):
        path = tmp_path / f"m{i:02}.py"
        path.write_text(JIT_IN_LOOP.replace("2.0", f"{i}.0"))
        originals[path] = path.read_text()
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jaxfix", "fix", str(tmp_path), "--write", "--no-cache", "-j", "1", "-q"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and all(p.read_text() == t for p, t in originals.items()):
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    expected_new = {}
    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config

    for path, text in originals.items():
        expected_new[path] = analyze(text, str(path), Config(), fix=True).fixed_source
    states = [path.read_text() in (originals[path], expected_new[path]) for path in originals]
    assert all(states)
    # A kill between creating and renaming a temporary file can leave that temporary file, never a
    # half-written module.
    assert all(p.suffix == ".py" or p.name.endswith(".jaxfix-tmp") for p in tmp_path.iterdir())


def test_cached_fix_diffs_equal_fresh_ones(tmp_path):
    """Cached results leave the source text out (the file's bytes give it back): diffs from a
    warm run must still be byte-for-byte those of a fresh one."""
    make_repo(tmp_path)
    fresh = cli("fix", ".", "--no-cache", cwd=tmp_path)
    cold = cli("fix", ".", cwd=tmp_path)
    warm = cli("fix", ".", cwd=tmp_path)
    assert fresh[0] == 1 and "+++" in fresh[1]
    assert cold == fresh and warm == fresh


# -- the digest memo: a warm run need not read a file whose status is unchanged ----------------


def _session(tmp_path, paths):
    from jaxfix.engine.session import CacheSession

    session = CacheSession(str(tmp_path / ".jaxfix_cache"), [str(p) for p in paths], None)
    session.save(None)
    return session


def _age(path, seconds):
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns - seconds * 1_000_000_000))


def test_a_file_unchanged_since_the_last_run_is_known_without_reading_it(tmp_path):
    from jaxfix.engine.cache import content_digest

    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(CLEAN)
    new.write_text(JIT_IN_LOOP)
    _age(old, 3600)
    first = _session(tmp_path, [old, new])
    assert first.data(str(old)) is not None  # nothing known yet: read
    second = _session(tmp_path, [old, new])
    assert second.data(str(old)) is None  # known by its status
    assert second.data(str(new)) is not None  # modified just before the run that recorded it: read
    assert second.digests[str(old)] == content_digest(old.read_bytes())
    assert second.digests[str(new)] == content_digest(new.read_bytes())


def test_a_file_edited_keeping_its_status_is_read_when_its_last_change_was_recent(tmp_path):
    """Two writes within one tick of the file system's clock leave the same status; a file changed
    shortly before the run that recorded it is read again whatever its status (git's rule)."""
    from jaxfix.engine.cache import content_digest

    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    before = path.stat()
    _session(tmp_path, [path])
    with open(path, "r+b") as handle:  # same inode, same size
        handle.write(b"y")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_ino == before.st_ino and path.stat().st_size == before.st_size
    again = _session(tmp_path, [path])
    assert again.digests[str(path)] == content_digest(b"y = 1\n")


def test_an_edit_changes_the_status_and_the_file_is_read(tmp_path):
    from jaxfix.engine.cache import content_digest

    path = tmp_path / "m.py"
    path.write_text(CLEAN)
    _age(path, 3600)
    _session(tmp_path, [path])
    path.write_text(JIT_IN_LOOP)
    _age(path, 3600)  # even an edit dated back an hour: its size or time differs from the record
    assert _session(tmp_path, [path]).digests[str(path)] == content_digest(JIT_IN_LOOP.encode())


def test_a_cached_result_with_its_text_reads_the_file_and_checks_its_bytes(tmp_path):
    """`--add-noqa` needs the text of a file known by its status: it is read, and a file whose
    bytes no longer have the recorded digest is analysed again, not answered from the cache."""
    (tmp_path / "m.py").write_text(JIT_IN_LOOP)
    _age(tmp_path / "m.py", 3600)
    assert cli("check", ".", "-q", cwd=tmp_path)[0] == 1
    assert cli("check", ".", "-q", cwd=tmp_path)[0] == 1  # the memo now knows m.py by its status
    code, _, _ = cli("check", ".", "-q", "--add-noqa", cwd=tmp_path)
    assert code == 0
    assert "# noqa: JAX2" in (tmp_path / "m.py").read_text()
    assert cli("check", ".", "-q", cwd=tmp_path)[0] == 0
