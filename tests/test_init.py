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
