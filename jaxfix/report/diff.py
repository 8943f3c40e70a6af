"""Unified diffs of fixes, the output of the `jaxfix fix` dry run."""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterator

# Past this many lines (both texts together) the diff is computed between anchor lines
# (`_opcodes`): difflib's matcher searches the whole remaining range for each matching block,
# quadratic in a large file with thousands of fixes (a 20k-line file with 2,940 fixes: 3.7 s of
# CPU, 50k lines: over a minute). Below it, difflib's own diff, as before.
SEGMENTED_FROM = 4000


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def unified_diff(path: str, old: str, new: str) -> str:
    """git-style a/ and b/ prefixes for relative paths; absolute paths are shown as they are."""
    if path.endswith(".ipynb"):  # per changed cell, not the notebook's JSON
        from jaxfix.engine.notebook import cell_diffs

        return cell_diffs(path, old, new)
    old_name, new_name = (path, path) if path.startswith("/") else (f"a/{path}", f"b/{path}")
    a, b = _lines(old), _lines(new)
    if len(a) + len(b) < SEGMENTED_FROM:
        return "".join(difflib.unified_diff(a, b, fromfile=old_name, tofile=new_name))
    return "".join(_unified(a, b, old_name, new_name, _opcodes(a, b)))


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes for `a` -> `b`, computed between anchors: lines that occur once in each
    text, in the same order in both (the longest such chain, as patience diff takes it). Each
    stretch between two anchors is diffed by difflib alone, so the cost is the sum of the
    stretches' costs, linear in the file when fixes are spread over it."""
    prefix = 0
    while prefix < len(a) and prefix < len(b) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < len(a) - prefix and suffix < len(b) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    pairs = [(prefix, prefix)]
    pairs.extend(_anchors(a, b, prefix, len(a) - suffix, prefix, len(b) - suffix))
    pairs.append((len(a) - suffix, len(b) - suffix))
    ops: list[list] = []

    def add(tag: str, i1: int, i2: int, j1: int, j2: int) -> None:
        if i1 == i2 and j1 == j2:
            return
        if ops and tag == "equal" and ops[-1][0] == "equal":
            ops[-1][2], ops[-1][4] = i2, j2
        else:
            ops.append([tag, i1, i2, j1, j2])

    add("equal", 0, prefix, 0, prefix)
    for k, ((i0, j0), (i1, j1)) in enumerate(zip(pairs, pairs[1:])):
        if k:  # an anchor (pairs[0] is where the common prefix ends), then the stretch up to the next
            add("equal", i0, i0 + 1, j0, j0 + 1)
            i0, j0 = i0 + 1, j0 + 1
        for tag, x1, x2, y1, y2 in difflib.SequenceMatcher(None, a[i0:i1], b[j0:j1]).get_opcodes():
            add(tag, i0 + x1, i0 + x2, j0 + y1, j0 + y2)
    add("equal", len(a) - suffix, len(a), len(b) - suffix, len(b))
    return [tuple(op) for op in ops] or [("equal", 0, 0, 0, 0)]


def _anchors(a: list[str], b: list[str], alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """(i, j) of the lines of a[alo:ahi] and b[blo:bhi] unique in each, the longest chain of them
    increasing in both (patience sorting, n log n)."""
    count_a: dict[str, int] = {}
    for i in range(alo, ahi):
        count_a[a[i]] = -1 if a[i] in count_a else i
    where_b: dict[str, int] = {}
    for j in range(blo, bhi):
        line = b[j]
        where_b[line] = -1 if line in where_b else j
    candidates = [
        (i, where_b[a[i]]) for i in range(alo, ahi) if count_a[a[i]] == i and where_b.get(a[i], -1) >= 0 and a[i].strip()
    ]
    # longest increasing subsequence of the j's (the i's increase already)
    tails: list[int] = []  # tails[k]: the smallest j ending an increasing chain of k + 1
    tail_at: list[int] = []  # index into candidates of that chain's end
    back: list[int] = []
    for index, (_, j) in enumerate(candidates):
        k = bisect.bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(index)
        else:
            tails[k] = j
            tail_at[k] = index
        back.append(tail_at[k - 1] if k else -1)
    chain: list[tuple[int, int]] = []
    at = tail_at[-1] if tail_at else -1
    while at >= 0:
        chain.append(candidates[at])
        at = back[at]
    chain.reverse()
    return chain


def _unified(a: list[str], b: list[str], fromfile: str, tofile: str, opcodes) -> Iterator[str]:
    """`difflib.unified_diff(a, b, fromfile, tofile)` made from the given opcodes."""
    matcher = difflib.SequenceMatcher(None, [], [])
    matcher.opcodes = opcodes  # what get_grouped_opcodes groups (it asks get_opcodes, which returns these)
    started = False
    for group in matcher.get_grouped_opcodes(3):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    yield " " + line
                continue
            if tag in {"replace", "delete"}:
                for line in a[i1:i2]:
                    yield "-" + line
            if tag in {"replace", "insert"}:
                for line in b[j1:j2]:
                    yield "+" + line


def _range(start: int, stop: int) -> str:
    """A hunk's range as difflib writes it (`_format_range_unified`)."""
    beginning = start + 1
    length = stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"
