from hypothesis import given, settings
from hypothesis import strategies as st

from jaxfix.edits import apply_edits, edits_between, overlaps
from jaxfix.model import Edit

lines = st.lists(st.sampled_from(["a\n", "b\n", "c\r\n", "def f():\n", "    return 1\n", "\n", "tail"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_edits_between_round_trips(old_lines, new_lines):
    old, new = "".join(old_lines), "".join(new_lines)
    assert apply_edits(old, edits_between(old, new)) == new


def test_edits_are_minimal_lines():
    old = "a = 1\nb = 2\nc = 3\n"
    new = "a = 1\nb = 20\nc = 3\n"
    (edit,) = edits_between(old, new)
    assert old[edit.start : edit.end] == "b = 2\n" and edit.text == "b = 20\n"


def test_identical_texts_need_no_edit():
    assert edits_between("x\n", "x\n") == ()


def test_overlap_detection():
    assert overlaps([Edit(0, 5, "")], [Edit(4, 6, "")])
    assert not overlaps([Edit(0, 5, "")], [Edit(5, 6, "")])
    assert overlaps([Edit(3, 3, "x")], [Edit(3, 3, "y")])  # two inserts at one point


def test_apply_rejects_overlap():
    import pytest

    with pytest.raises(ValueError):
        apply_edits("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])
