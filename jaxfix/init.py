"""`jaxfix init`: a commented `[tool.jaxfix]` section, generated from the rules' own options."""

from __future__ import annotations

from pathlib import Path

from jaxfix.engine import registry


def config_section() -> str:
    lines = [
        "[tool.jaxfix]",
        "# Rule codes or prefixes to enable; \"ALL\" for everything (`jaxfix rules` lists them).",
        'select = ["JAX"]',
        "# Codes or prefixes to disable.",
        "ignore = []",
        "# Extra gitignore-style patterns to skip (.gitignore, virtualenvs and build folders always are).",
        "exclude = []",
        "# Apply fixes marked unsafe with `jaxfix fix` (each says which hazard it cannot rule out).",
        "unsafe-fixes = false",
        "# Also report what rules find on evidence that was mostly wrong on code nobody prepared (docs/preview.md).",
        "preview = false",
        "",
        "# Codes to ignore per file pattern.",
        "[tool.jaxfix.per-file-ignores]",
        '# "tests/*" = ["JAX2"]',
    ]
    tables: dict[str, list] = {}
    for rule in registry.all_rules():
        if rule.options:
            tables.setdefault(rule.table(), []).append(rule)
    for table, rules in tables.items():
        codes = ", ".join(c.code for rule in rules for c in rule.codes)
        options = {opt.name: opt for rule in rules for opt in rule.options}.values()
        lines += ["", f"# Options of rule {table} ({codes}).", f"[tool.jaxfix.{table}]"]
        for opt in options:
            choices = f" One of {', '.join(map(repr, opt.choices))}." if opt.choices else ""
            lines.append(f"# {opt.doc}{choices}")
            lines.append(f"# {opt.name} = {_toml(opt.default)}")
    return "\n".join(lines) + "\n"


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def has_section(path: Path) -> bool:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return "jaxfix" in data.get("tool", {})


def append_section(path: Path) -> None:
    """Append the section; the caller has checked there is none (never clobber existing config)."""
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    separator = "" if not existing else ("\n" if existing.endswith("\n") else "\n\n")
    newline = "\r\n" if "\r\n" in existing else "\n"
    addition = (separator + ("\n" if existing else "") + config_section()).replace("\n", newline)
    with open(path, "a", encoding="utf-8", newline="") as handle:
        handle.write(addition)
