"""Property: fivetran_history builds, batch after batch, exactly the table the
sequential Python model of the rules builds (tests/reference.py)."""
from __future__ import annotations

import datetime as dt

from hypothesis import example, given
from hypothesis import strategies as st

from conftest import property_settings
from reference import UNMODIFIED, FivetranModel, sorted_rows

DAY = dt.datetime(2026, 1, 1)
EVENT = st.tuples(
    st.integers(1, 3),  # key
    st.sampled_from(["upsert", "update", "delete"]),
    st.integers(0, 8),  # start, in hours
    st.sampled_from(["a", "b", None, UNMODIFIED]),
    st.sampled_from(["x", None, UNMODIFIED]),
)


def unique_starts(events):
    seen, kept = set(), []
    for event in events:
        if (event[0], event[2]) not in seen:
            seen.add((event[0], event[2]))
            kept.append(event)
    return kept


@property_settings
@given(batches=st.lists(st.lists(EVENT, max_size=6).map(unique_starts), min_size=1, max_size=3))
@example(batches=[[(1, "upsert", 1, "a", "x"), (1, "delete", 3, None, None)],
                  [(1, "update", 2, "b", UNMODIFIED), (1, "upsert", 5, None, None)]])
@example(batches=[[(1, "upsert", 0, "a", "x")],  # updates of a key with no version, all ignored
                  [(2, "update", 0, "a", None), (2, "update", 7, None, None), (1, "update", 3, UNMODIFIED, None)]])
def test_table_matches_the_model_of_the_rules(project, batches):
    project.sql(f"drop table if exists {project.schema}.ft_hist")
    project.model("ft_hist", "{{ config(materialized='fivetran_history', unique_key='id', unmodified_string='unmod') }} "
                             "select * from {{ target.schema }}.batch")
    model = FivetranModel()
    for number, batch in enumerate(batches):
        synced = DAY + dt.timedelta(days=30 + number)
        rows = [(k, op, DAY + dt.timedelta(hours=h), a, b, synced) for k, op, h, a, b in batch]
        # an upsert gives every column: no unmodified markers in it
        rows = [(k, op, t, *(("z" if v == UNMODIFIED else v) for v in (a, b)), s) if op == "upsert" else (k, op, t, a, b, s)
                for k, op, t, a, b, s in rows]
        project.create_table("batch", "id int, _fivetran_op string, _fivetran_start timestamp, a string, b string, "
                                      "_fivetran_synced timestamp", rows)
        project.run("run")
        model.apply([((k,), op, t, {"a": a, "b": b}, s) for k, op, t, a, b, s in rows])
    assert sorted_rows(project.table("ft_hist", "id, a, b, _fivetran_start, _fivetran_end, _fivetran_active, _fivetran_synced")) \
        == model.rows()
