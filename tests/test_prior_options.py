"""The priors' parameters grouped in SearchConfig (working_files, authorship, recency, aggregate), as the graph
channel's are: the flat option names set a field of their group, a group object replaces the whole group,
bad values are refused under the flat name, and ``to_dict`` (trace params, fingerprints) stays flat and in
the order the fields had."""

from __future__ import annotations

import pytest

from neurongraph.config import (
    PRIOR_OPTIONS,
    AggregateOptions,
    AuthorshipOptions,
    RecencyOptions,
    SearchConfig,
    WorkingFileOptions,
)
from neurongraph.errors import InvalidArgument

FLAT_ORDER = [
    "files",
    "file_seed_weight",
    "file_overlap_weight",
    "file_seed_specificity",
    "authorship_weight",
    "recency_weight",
    "recency_exponent",
    "recency_half_life_days",
    "repair_weight",
    "recency_relations",
    "aggregate_weight",
    "changes",
]


def test_flat_names_set_their_group_and_leave_the_rest():
    cfg = SearchConfig.from_options(recency_weight=0.2, repair_weight=0.0, file_seed_weight=1.0, channel="beam")
    assert cfg.recency == RecencyOptions(weight=0.2, repair_weight=0.0)
    assert cfg.working_files == WorkingFileOptions(seed_weight=1.0)
    assert cfg.authorship == AuthorshipOptions() and cfg.aggregate == AggregateOptions()
    again = cfg.replace(recency_exponent=1.0)  # a flat name keeps the group's other fields
    assert again.recency == RecencyOptions(weight=0.2, repair_weight=0.0, exponent=1.0)
    assert cfg.replace(aggregate=AggregateOptions(weight=1.0)).aggregate.weight == 1.0
    both = cfg.replace(authorship=AuthorshipOptions(weight=2.0), authorship_weight=0.5)
    assert both.authorship.weight == 0.5  # the flat name applies on top of the group given with it
    assert set(PRIOR_OPTIONS.values()) == {"working_files", "authorship", "recency", "aggregate"}


def test_to_dict_stays_flat_in_the_fields_old_order_and_round_trips():
    cfg = SearchConfig.from_options(authorship_weight=0.0, recency_relations=["fixes"])
    d = cfg.to_dict()
    keys = list(d)
    at = keys.index("files")
    assert keys[at : at + len(FLAT_ORDER)] == FLAT_ORDER
    assert not {"working_files", "authorship", "recency", "aggregate"} & set(d)
    assert d["authorship_weight"] == 0.0 and d["recency_relations"] == ("fixes",)
    back = SearchConfig.from_options(**{k: v for k, v in d.items() if k != "strategy"})
    assert back == cfg and back.fingerprint("m") == cfg.fingerprint("m")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"recency_weight": 2}, "recency_weight"),
        ({"aggregate_weight": -1}, "aggregate_weight"),
        ({"file_overlap_weight": -0.5}, "file_overlap_weight"),
        ({"recency_half_life_days": 0}, "recency_half_life_days"),
        ({"recency_relations": [1]}, "recency_relations"),
        ({"authorship_weight": 11}, "authorship_weight"),
        ({"recency": 0.5}, "recency must be a RecencyOptions"),
        ({"nope": 1}, "unknown search option"),
    ],
)
def test_bad_values_are_refused_under_the_name_given(options, message):
    with pytest.raises(InvalidArgument, match=message):
        SearchConfig.from_options(**options)
