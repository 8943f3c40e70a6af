import os
import subprocess

from jaxfix.engine.config import ConfigResolver
from jaxfix.engine.discovery import discover


def touch(path, text="x = 1\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def names(found, root):
    return [p.resolve().relative_to(root.resolve()).as_posix() for p in found.files]


def test_walk_respects_gitignore_excludes_and_build_folders(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    touch(tmp_path / ".gitignore", "ignored_dir/\n*_gen.py\n")
    touch(tmp_path / "pkg" / "a.py")
    touch(tmp_path / "pkg" / "b_gen.py")
    touch(tmp_path / "pkg" / "notes.txt")
    touch(tmp_path / "ignored_dir" / "c.py")
    touch(tmp_path / "build" / "d.py")
    touch(tmp_path / "myenv" / "pyvenv.cfg", "home = /usr\n")
    touch(tmp_path / "myenv" / "lib" / "e.py")
    touch(tmp_path / "pkg" / "sub" / ".gitignore", "local.py\n")
    touch(tmp_path / "pkg" / "sub" / "local.py")
    touch(tmp_path / "pkg" / "sub" / "kept.py")
    touch(tmp_path / "pyproject.toml", "[tool.jaxfix]\nexclude = ['skipme']\n")
    touch(tmp_path / "skipme" / "f.py")
    found = discover([str(tmp_path)], ConfigResolver())
    assert names(found, tmp_path) == ["pkg/a.py", "pkg/sub/kept.py"]
    assert found.errors == []


def test_gitignore_applies_to_a_folder_given_relative_to_the_current_one(tmp_path, monkeypatch):
    """`jaxfix check .` (or `src`): a .gitignore found while walking matched the resolved paths
    against the folder as given, which only an absolute path matched, so it was never applied."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    touch(tmp_path / ".gitignore", "gen/\n*_gen.py\n")
    touch(tmp_path / "src" / "a.py")
    touch(tmp_path / "src" / "b_gen.py")
    touch(tmp_path / "src" / "gen" / "c.py")
    touch(tmp_path / "src" / "sub" / ".gitignore", "local.py\n")
    touch(tmp_path / "src" / "sub" / "local.py")
    touch(tmp_path / "src" / "sub" / "kept.py")
    monkeypatch.chdir(tmp_path)
    for given in (".", "src", "./src"):
        found = discover([given], ConfigResolver())
        assert names(found, tmp_path) == ["src/a.py", "src/sub/kept.py"], given


def test_gitignore_of_parent_applies_when_walking_a_subfolder(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    touch(tmp_path / ".gitignore", "gen/\n")
    touch(tmp_path / "src" / "gen" / "x.py")
    touch(tmp_path / "src" / "y.py")
    found = discover([str(tmp_path / "src")], ConfigResolver())
    assert names(found, tmp_path) == ["src/y.py"]


def test_explicit_file_is_always_taken_and_missing_path_is_an_error(tmp_path):
    touch(tmp_path / "build" / "x.py")
    found = discover([str(tmp_path / "build" / "x.py"), str(tmp_path / "missing.py")], ConfigResolver())
    assert names(found, tmp_path) == ["build/x.py"]
    assert len(found.errors) == 1 and "missing.py" in found.errors[0]


def test_empty_folder_and_symlink_loop(tmp_path):
    (tmp_path / "empty").mkdir()
    assert discover([str(tmp_path / "empty")], ConfigResolver()).files == []
    touch(tmp_path / "loop" / "a.py")
    os.symlink(tmp_path / "loop", tmp_path / "loop" / "again")
    found = discover([str(tmp_path / "loop")], ConfigResolver())
    assert names(found, tmp_path) == ["loop/a.py"]


def test_tree_under_an_excluded_folder_name_is_still_walked(tmp_path):
    # Checking an installed package: its absolute path contains site-packages, its own tree does not.
    touch(tmp_path / "site-packages" / "pkg" / "mod.py")
    touch(tmp_path / "site-packages" / "pkg" / "build" / "gen.py")
    found = discover([str(tmp_path / "site-packages" / "pkg")], ConfigResolver())
    assert names(found, tmp_path) == ["site-packages/pkg/mod.py"]


def test_explicitly_named_ignored_folder_is_walked_with_its_own_gitignores(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    touch(tmp_path / ".gitignore", ".venv/\n")
    touch(tmp_path / ".venv" / "lib" / "pkg" / "mod.py")
    touch(tmp_path / ".venv" / "lib" / "pkg" / ".gitignore", "skip.py\n")
    touch(tmp_path / ".venv" / "lib" / "pkg" / "skip.py")
    assert discover([str(tmp_path)], ConfigResolver()).files == []
    found = discover([str(tmp_path / ".venv" / "lib" / "pkg")], ConfigResolver())
    assert names(found, tmp_path) == [".venv/lib/pkg/mod.py"]


def test_a_gitignore_of_names_is_matched_as_pathspec_matches_it():
    """The common .gitignore (names, some ending in `/`) is matched without pathspec
    (`discovery._NameSpec`), with pathspec's answers; any other pattern leaves it to pathspec."""
    import itertools

    import pathspec

    from jaxfix.engine.discovery import _NameSpec

    lines = [".venv/", "__pycache__/", "*.egg-info/", "build/", "dist", "*.pyc", "# a comment", "", "x?", ".*"]
    ours, theirs = _NameSpec.of(lines), pathspec.GitIgnoreSpec.from_lines(lines)
    parts = ["src", "build", "dist", ".venv", "m.egg-info", "a.pyc", "x1", "xy", ".env", "pkg", "m.py"]
    for depth in (1, 2, 3):
        for combo in itertools.product(parts, repeat=depth):
            for path in ("/".join(combo), "/".join(combo) + "/"):
                assert ours.match_file(path) == theirs.match_file(path), path
    for other in (["/build"], ["src/gen"], ["!keep.py"], ["**/gen"], ["[ab].py"], ["\\#x"], ["trailing "]):
        assert _NameSpec.of(other) is None, other


def test_jupyter_checkpoint_copies_are_not_walked(tmp_path):
    """hershkumar/summer2022@<heldout28>: Jupyter's `.ipynb_checkpoints/*-checkpoint.ipynb` autosave
    copies were checked beside their notebooks (36 of the pool's 194 findings); Ruff excludes the
    folder by default. A notebook given by name is still checked."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nb, str(tmp_path / "train.ipynb"))
    (tmp_path / ".ipynb_checkpoints").mkdir()
    nbformat.write(nb, str(tmp_path / ".ipynb_checkpoints" / "train-checkpoint.ipynb"))
    found = discover([str(tmp_path)], ConfigResolver())
    assert names(found, tmp_path) == ["train.ipynb"]
    given = discover([str(tmp_path / ".ipynb_checkpoints" / "train-checkpoint.ipynb")], ConfigResolver())
    assert [p.name for p in given.files] == ["train-checkpoint.ipynb"]
