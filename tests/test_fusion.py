"""Entry fusion (retrieval/fusion.py): the vectorised rank lookup equals the plain definition."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neurongraph.retrieval.fusion import _ranks, sorted_union


@given(st.lists(st.integers(0, 60), max_size=40), st.lists(st.integers(0, 60), max_size=40))
def test_ranks_are_one_based_positions_in_the_list_last_one_wins(ranked, extra):
    nodes = np.union1d(np.array(ranked, np.int64), np.array(extra, np.int64)).astype(np.int64)
    pos = {n: i + 1 for i, n in enumerate(ranked)}  # the definition: a repeated node keeps its last position
    expected = [pos.get(int(n), 0) for n in nodes]
    assert _ranks(nodes, np.array(ranked, np.int64)).tolist() == expected


@given(st.lists(st.integers(0, 60), max_size=40, unique=True), st.lists(st.integers(0, 60), max_size=40))
def test_ranks_of_unique_lists_and_of_nodes_missing_from_the_union(ranked, other):
    """Unique lists take the scatter path; a ranked node that ``nodes`` lacks takes the general one."""
    pos = {n: i + 1 for i, n in enumerate(ranked)}
    nodes = np.union1d(np.array(ranked, np.int64), np.array(other, np.int64)).astype(np.int64)
    assert _ranks(nodes, np.array(ranked, np.int64)).tolist() == [pos.get(int(n), 0) for n in nodes]
    some = np.unique(np.array(other, np.int64))  # not every ranked node is listed here
    assert _ranks(some, np.array(ranked, np.int64)).tolist() == [pos.get(int(n), 0) for n in some]


@given(st.lists(st.integers(-5, 40), max_size=30), st.lists(st.integers(-5, 40), max_size=30))
def test_sorted_union_is_union1d(a, b):
    for x, y in ((np.array(a, np.int64), np.array(b, np.int64)), (np.array(a, np.int32), np.zeros(0, np.int64))):
        got, want = sorted_union(x, y), np.union1d(x, y)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
