"""Property: scd_type6 builds, load after load, exactly the dimension the
pure-Python model of its rules builds (tests/reference.py)."""
from __future__ import annotations

import datetime as dt

from hypothesis import example, given
from hypothesis import strategies as st

from conftest import property_settings
from reference import Type6Model, sorted_rows

VALUES = st.sampled_from([None, "", "a", "b"])
SNAPSHOT = st.dictionaries(st.integers(1, 4), st.tuples(VALUES, VALUES, VALUES), max_size=4)
BASE = dt.datetime(2026, 1, 1, 6)


@property_settings
@given(snapshots=st.lists(SNAPSHOT, min_size=1, max_size=3))
@example(snapshots=[{1: ("a", "a", "a")}, {}, {1: ("b", "b", None)}])
def test_dimension_matches_the_model_of_the_rules(project, snapshots):
    project.sql(f"drop table if exists {project.schema}.dim")
    project.model("dim", "{{ config(materialized='scd_type6', unique_key='id', type0_columns=['t0'], "
                         "type1_columns=['t1'], type3_columns={'t2': 'prev'}) }} select * from {{ target.schema }}.src")
    model = Type6Model()
    for number, snapshot in enumerate(snapshots):
        at = BASE + dt.timedelta(days=number)
        project.create_table("src", "id int, t0 string, t1 string, t2 string", [(k, *v) for k, v in snapshot.items()])
        project.run("run", variables={"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S")})
        model.load(snapshot, at)
    actual = project.table("dim", "id, t0, t1, t2, prev, effective_from, effective_to, current_flag, version, change_reason")
    assert sorted_rows(actual) == model.table()
