"""Property: for any sequence of snapshots, both strategies build exactly the
history the pure-Python model of the rules builds (tests/reference.py).

CI runs a few examples (HYPOTHESIS_EXAMPLES, default 4); a larger run on demand:
HYPOTHESIS_EXAMPLES=50 ./scripts/test.sh -k properties"""
from __future__ import annotations

import datetime as dt

from hypothesis import example, given
from hypothesis import strategies as st

from conftest import property_settings
from reference import Scd2Model, hash_key

KEYS = st.integers(min_value=1, max_value=5)
ATTRIBUTES = st.tuples(st.sampled_from([None, "", "x", "x|y", "y"]), st.sampled_from([None, 0, 1]))
SNAPSHOT = st.dictionaries(KEYS, ATTRIBUTES, max_size=5)
BASE = dt.datetime(2026, 1, 1, 6, 0, 0, 123456)
STRATEGIES = ("merge", "ordered")


@property_settings
@given(snapshots=st.lists(SNAPSHOT, min_size=1, max_size=3))
@example(snapshots=[{1: ("x", 1), 2: (None, None)}, {2: ("", None)}, {1: ("x", 1), 2: ("", 0)}])
def test_history_matches_the_model_of_the_rules(project, snapshots):
    for strategy in STRATEGIES:
        project.sql(f"drop table if exists {project.schema}.hist_{strategy}")
        project.model(
            f"hist_{strategy}",
            f"{{{{ config(materialized='scd2_hist', unique_key='id', strategy='{strategy}') }}}} "
            "select * from {{ target.schema }}.snapshot",
        )
    model = Scd2Model()
    for number, snapshot in enumerate(snapshots):
        at = BASE + dt.timedelta(days=number)
        run_id = f"r{number}"
        project.create_table("snapshot", "id int, a string, b int", [(k, a, b) for k, (a, b) in snapshot.items()])
        project.run("run", variables={"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S.%f"), "load_run_id": run_id})
        model.load({(k,): {"a": a, "b": b} for k, (a, b) in snapshot.items()}, at, run_id)

    expected = sorted(
        (hash_key([v.key[0], v.started_at]), v.key[0], v.attributes["a"], v.attributes["b"], v.started_at,
         v.ended_at, v.state, v.load_run_id)
        for v in model.versions
    )
    for strategy in STRATEGIES:
        actual = project.table(
            f"hist_{strategy}",
            f"hist_{strategy}_key, id, a, b, version_started_at, version_ended_at, version_state, load_run_id",
        )
        assert sorted(actual) == expected, strategy
