"""Rule docs come from the rule modules; the committed copies must not go stale."""

from jaxfix.engine import registry
from jaxfix.ruledocs import DOCS_DIR, expected_files

SECTIONS = ("What it does", "Why is this bad?", "Example", "Fix safety")


def test_generated_docs_are_up_to_date():
    stale = [
        name
        for name, text in expected_files().items()
        if not (DOCS_DIR / name).exists() or (DOCS_DIR / name).read_text(encoding="utf-8") != text
    ]
    extra = sorted(p.name for p in DOCS_DIR.glob("*.md") if p.name not in expected_files())
    assert not stale and not extra, f"run `python -m jaxfix.ruledocs` (stale: {stale}, extra: {extra})"


def test_every_rule_explains_itself():
    assert registry.all_rules()
    for rule in registry.all_rules():
        doc = rule.doc()
        missing = [s for s in SECTIONS if s not in doc]
        assert not missing, f"{rule.name} docstring lacks {missing}"
        assert rule.invalid and rule.valid, f"{rule.name} has no VALID/INVALID examples"
        assert rule.prefilter, f"{rule.name} has no prefilter"
