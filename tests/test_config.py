import pytest

from jaxfix.engine.config import (
    Config,
    ConfigError,
    ConfigResolver,
    load_pyproject,
    parse_table,
)
from jaxfix.engine.registry import all_rules, is_selected


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_most_specific_prefix_wins():
    assert is_selected("JAX201", ("JAX",), ())
    assert not is_selected("JAX201", ("JAX",), ("JAX2",))
    assert is_selected("JAX201", ("JAX201",), ("JAX2",))
    assert not is_selected("JAX101", ("JAX2",), ())
    assert is_selected("JAX101", ("ALL",), ())


def test_unknown_key_is_an_error_naming_file_and_key(tmp_path):
    pyproject = write(tmp_path / "pyproject.toml", "[tool.jaxfix]\nselcet = ['JAX']\n")
    with pytest.raises(ConfigError) as info:
        load_pyproject(pyproject)
    assert str(pyproject) in str(info.value) and "selcet" in str(info.value)


@pytest.mark.parametrize(
    "table, fragment",
    [
        ({"select": "JAX"}, "list of strings"),
        ({"unsafe-fixes": "yes"}, "true or false"),
        ({"preview": 1}, "`preview` must be true or false"),
        ({"select": ["NOPE1"]}, "unknown rule code"),
        ({"per-file-ignores": ["x"]}, "table"),
    ],
)
def test_wrong_types_are_errors(table, fragment):
    with pytest.raises(ConfigError, match=fragment):
        parse_table(table, "pyproject.toml")


def test_rule_options_are_validated():
    rule = next(r for r in all_rules() if r.options)
    option = rule.options[0]
    with pytest.raises(ConfigError, match="unknown option"):
        parse_table({rule.table(): {"no-such-option": 1}}, "pyproject.toml")
    wrong = "text" if not isinstance(option.default, str) else 3
    with pytest.raises(ConfigError, match=option.name):
        parse_table({rule.table(): {option.name: wrong}}, "pyproject.toml")
    config = parse_table({rule.table(): {option.name: option.default}}, "pyproject.toml")
    assert config.options()[rule.table()][option.name] == option.default


def test_nearest_pyproject_applies_per_folder(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.jaxfix]\nignore = ['JAX2']\n")
    write(tmp_path / "sub" / "pyproject.toml", "[tool.jaxfix]\nselect = ['JAX1']\n")
    write(tmp_path / "other" / "pyproject.toml", "[project]\nname = 'x'\n")  # no [tool.jaxfix]: keep looking up
    resolver = ConfigResolver()
    assert resolver.for_path(tmp_path / "a.py").ignore == ("JAX2",)
    assert resolver.for_path(tmp_path / "sub" / "b.py").select == ("JAX1",)
    assert resolver.for_path(tmp_path / "other" / "c.py").ignore == ("JAX2",)


def test_cli_overrides_replace_select_and_extend_ignore(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.jaxfix]\nignore = ['JAX1']\n")
    resolver = ConfigResolver(overrides={"select": ("JAX2",), "extend_ignore": ("JAX3",)})
    config = resolver.for_path(tmp_path / "a.py")
    assert config.select == ("JAX2",) and config.ignore == ("JAX1", "JAX3")


def test_per_file_ignores_and_exclude(tmp_path):
    config = parse_table(
        {"per-file-ignores": {"tests/*": ["JAX2"]}, "exclude": ["generated"]}, "pyproject.toml", root=str(tmp_path)
    )
    assert not config.code_selected("JAX201", str(tmp_path / "tests" / "t.py"))
    assert config.code_selected("JAX201", str(tmp_path / "src" / "t.py"))
    assert config.excluded(str(tmp_path / "generated" / "x.py"))
    assert Config().excluded(".venv/lib/x.py")


def test_preview_comes_from_config_and_the_command_line(tmp_path):
    """`preview = true` in [tool.jaxfix] turns preview mode on; `--preview`/`--no-preview` win over it."""
    from jaxfix.checkcmd import resolver

    write(tmp_path / "pyproject.toml", "[tool.jaxfix]\npreview = true\n")
    target = tmp_path / "m.py"
    write(target, "x = 1\n")
    assert parse_table({"preview": True}, "pyproject.toml").preview
    assert resolver(None, None, None).for_path(target).preview
    assert not resolver(None, None, None, preview=False).for_path(target).preview
    assert parse_table({}, "pyproject.toml").fingerprint() != parse_table({"preview": True}, "pyproject.toml").fingerprint()


def test_invalid_toml_that_does_not_configure_jaxfix_is_skipped_with_a_warning(tmp_path):
    """Another tool's broken pyproject.toml (alexisiddiqui/JAX-ENT's, met while building a blind pool) does not stop
    the run: the resolver looks further up and says which file it skipped; a broken one that names
    jaxfix stays an error, since ignoring it would run other rules than the user chose."""
    write(tmp_path / "pyproject.toml", "[tool.jaxfix]\nignore = ['JAX2']\n")
    write(tmp_path / "vendored" / "pyproject.toml", "[project\nname = \n")
    resolver = ConfigResolver()
    assert resolver.for_path(tmp_path / "vendored" / "a.py").ignore == ("JAX2",)
    [warning] = resolver.warnings
    assert str(tmp_path / "vendored" / "pyproject.toml") in warning and "invalid TOML" in warning

    write(tmp_path / "mine" / "pyproject.toml", "[tool.jaxfix\nselect = ['JAX1']\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        ConfigResolver().for_path(tmp_path / "mine" / "b.py")
