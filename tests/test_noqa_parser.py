"""The one `# noqa` parser (`jaxfix.analysis.comments`) that suppression, `--add-noqa` and JAX001 share."""

import pytest

from jaxfix.analysis.comments import find_noqa, find_noqa_with_codes, noqa_codes


@pytest.mark.parametrize(
    "line, codes",
    [
        ("x = 1", None),
        ("x = 1  # noqa", frozenset()),
        ("x = 1  # NOQA:jax201 , E501", frozenset({"JAX201", "E501"})),
        ("x = 1  #noqa:JAX2", frozenset({"JAX2"})),
        ("x = 1  # noqa: ", frozenset()),  # no code after the colon: a bare noqa
        ("x = 1  # noqa # noqa: JAX201", frozenset()),  # the first one decides
    ],
)
def test_codes_a_line_silences(line, codes):
    assert noqa_codes(line) == codes


def test_add_noqa_and_jax001_read_the_codes_and_where_they_are():
    match = find_noqa("y = 2  # noqa: E501, JAX101  # why")
    assert match.group("colon") is not None and match.group("codes") == "E501, JAX101"
    assert find_noqa("y = 2  # noqa").group("colon") is None
    # JAX001 judges the codes a comment names, even after a bare noqa in the same comment
    assert find_noqa_with_codes("# noqa # noqa: JAX201").group("codes") == "JAX201"
    assert find_noqa_with_codes("# noqa") is None
