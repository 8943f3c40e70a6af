from typer.testing import CliRunner

from jaxfix.cli import app
from jaxfix.engine.config import load_pyproject


def run(*args):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_init_appends_a_valid_commented_section(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("[project]\nname = 'demo'\n")
    code, _, _ = run("init", str(path))
    assert code == 0
    text = path.read_text()
    assert text.startswith("[project]\nname = 'demo'\n") and "[tool.jaxfix]" in text
    config = load_pyproject(path)  # the generated section is valid config
    assert config.select == ("JAX",)


def test_init_never_clobbers_existing_config(tmp_path):
    path = tmp_path / "pyproject.toml"
    original = "[tool.jaxfix]\nignore = ['JAX2']\n"
    path.write_text(original)
    code, _, err = run("init", str(path))
    assert code == 2 and "already has" in err and path.read_text() == original


def test_init_print_writes_nothing(tmp_path):
    code, out, _ = run("init", str(tmp_path / "pyproject.toml"), "--print")
    assert code == 0 and out.startswith("[tool.jaxfix]") and not (tmp_path / "pyproject.toml").exists()


SWEEP = """\
import jax
import jax.numpy as jnp

x = jnp.ones(3)
for s in [0.5, 1.0, 2.0]:
    f = jax.jit(lambda v: v * s)
    print(f(x))
"""


def test_init_writes_the_preview_key_and_turning_it_on_shows_preview_findings(tmp_path):
    """The template has `preview = false` under one comment line (a newcomer looked for it there),
    and setting it true in the generated file is what `--preview` does: through the real CLI."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}

    def jaxfix(*args):
        return subprocess.run(
            [sys.executable, "-m", "jaxfix", *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
        )

    assert jaxfix("init").returncode == 0
    path = tmp_path / "pyproject.toml"
    lines = path.read_text().splitlines()
    at = lines.index("preview = false")
    assert lines[at - 1].startswith("# ") and "docs/preview.md" in lines[at - 1]
    assert load_pyproject(path).preview is False
    (tmp_path / "sweep.py").write_text(SWEEP)  # JAX201 over values written out in a list: preview
    assert jaxfix("check", "--no-cache", "sweep.py").returncode == 0
    path.write_text(path.read_text().replace("preview = false", "preview = true"))
    shown = jaxfix("check", "--no-cache", "sweep.py")
    assert shown.returncode == 1 and "sweep.py:6:9: JAX201" in shown.stdout
