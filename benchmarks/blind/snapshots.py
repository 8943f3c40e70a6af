"""Snapshots of the blind pool's repositories, made on demand and never committed (issue #29).

Each pinned repository becomes `<root>/<owner>__<name>/` holding its text files at the pinned
commit. A snapshot is taken from a local bare mirror when one is given (`--mirror DIR`, layout
`DIR/<owner>+<name>/repo`; blobs absent from the mirror are skipped), else by `git clone` and a
checkout of the pinned commit. An existing snapshot directory is used as it is.

    python benchmarks/blind/snapshots.py --pool dev --root /tmp/blind --mirror /work/.mirror
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
REPOS = HERE / "repos.toml"
# heldout2: the pool built when heldout was spent (its labels known), measured once at the end
# heldout3: the pool built when heldout2 was spent, labelled at d0d76d7, measured once at the end
# heldout4: built when heldout3 was spent, labelled at 1760198, measured once at the end
# heldout5: built alongside heldout4 (pool5), labelled at 1760198, measured once at the end
# heldout6, heldout7: built when heldout4/5 were spent (session 15), labelled at 7f15e34, measured once at the end
# heldout24: built in session 28 by a reviewer who does not tune, labelled in session 29
# heldout25: built in session 29 by a reviewer who does not tune, labelled in session 30
# heldout26: built in session 31 by a reviewer who does not tune, labelled in session 31
# heldout27: built in session 31 for session 32 by a reviewer who does not tune, labelled in session 32
# heldout28: built in session 32 for session 33 by a reviewer who does not tune, labelled in session 33
# heldout29: built in session 33 for session 34 by a reviewer who does not tune, labelled in session 34
# heldout30: built in session 34 for session 35 by a reviewer who does not tune, labelled in session 35
# heldout31: built in session 35 for session 36 by a reviewer who does not tune, labelled in session 36
# heldout32: built in session 36 for session 37 by a reviewer who does not tune, labelled in session 37
POOLS = ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout11", "heldout12", "heldout13", "heldout14", "heldout15", "heldout16", "heldout17", "heldout18", "heldout19", "heldout20", "heldout21", "heldout22", "heldout23", "heldout24", "heldout25", "heldout26", "heldout27", "heldout28", "heldout29", "heldout30", "heldout31", "heldout32")
# the pools no tool that tunes has been measured on yet: never among the spent pools a regression
# run measures (`blind_spent.py`); a pool leaves this list once its blind figure is taken
UNMEASURED = ("heldout32",)
# what a snapshot keeps from a mirror: the source and the text that says how it is called
TEXT_SUFFIXES = (".py", ".ipynb", ".pyi", ".toml", ".cfg", ".ini", ".txt", ".md", ".yaml", ".yml")


@dataclass(frozen=True)
class Pinned:
    pool: str
    repo: str  # owner/name
    commit: str

    @property
    def dirname(self) -> str:
        return self.repo.replace("/", "__")


def load(pool: str | None = None, path: Path = REPOS) -> list[Pinned]:
    """The pinned repositories of one pool (or of both), in file order."""
    data = tomllib.loads(path.read_text())
    pools = POOLS if pool is None else (pool,)
    out = []
    for name in pools:
        for entry in data.get(name, []):
            commit = entry["commit"]
            if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
                raise ValueError(f"{entry['repo']}: commit must be 40 hex digits, got {commit!r}")
            out.append(Pinned(name, entry["repo"], commit))
    return out


def _git(*args: str, git_dir: Path | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    cmd = ["git"] + ([f"--git-dir={git_dir}"] if git_dir else []) + list(args)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)


def _from_mirror(pinned: Pinned, git_dir: Path, dest: Path) -> int:
    """Writes the text blobs of the pinned commit under dest; returns how many were written."""
    listing = _git("ls-tree", "-r", "-z", pinned.commit, git_dir=git_dir)
    if listing.returncode != 0:
        raise RuntimeError(f"{pinned.repo}: commit {pinned.commit} not in {git_dir}: {listing.stderr.decode()[:200]}")
    written = 0
    for entry in listing.stdout.decode().split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        _mode, kind, sha = meta.split()
        if kind != "blob" or not path.endswith(TEXT_SUFFIXES):
            continue
        blob = _git("cat-file", "blob", sha, git_dir=git_dir)
        if blob.returncode != 0:  # a large blob the mirror does not hold
            continue
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
        written += 1
    return written


def _from_clone(pinned: Pinned, dest: Path) -> None:
    url = f"https://github.com/{pinned.repo}.git"
    clone = _git("clone", "--quiet", "--filter=blob:limit=1m", "--no-checkout", url, str(dest))
    if clone.returncode != 0:
        raise RuntimeError(f"{pinned.repo}: git clone failed: {clone.stderr.decode()[:200]}")
    checkout = _git("checkout", "--quiet", pinned.commit, cwd=dest)
    if checkout.returncode != 0:
        raise RuntimeError(f"{pinned.repo}: checkout {pinned.commit} failed: {checkout.stderr.decode()[:200]}")


def ensure(pinned: Pinned, root: Path, mirror: Path | None = None) -> Path:
    """The snapshot directory of one pinned repository, made when it is missing."""
    dest = root / pinned.dirname
    if dest.is_dir() and any(dest.iterdir()):
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    git_dir = mirror / pinned.repo.replace("/", "+") / "repo" if mirror else None
    if git_dir is not None and git_dir.is_dir():
        _from_mirror(pinned, git_dir, dest)
    else:
        dest.rmdir()
        _from_clone(pinned, dest)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", choices=POOLS, required=True)
    parser.add_argument("--root", type=Path, required=True, help="where the snapshots live")
    parser.add_argument("--mirror", type=Path, help="bare mirrors, layout <owner>+<name>/repo")
    args = parser.parse_args(argv)
    failed = 0
    for pinned in load(args.pool):
        try:
            print(ensure(pinned, args.root, args.mirror))
        except RuntimeError as exc:
            print(f"skipped: {exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
