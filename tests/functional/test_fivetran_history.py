"""fivetran_history: the worked example of Fivetran's history mode, each rule of the materialization, and bad
input, against tables computed by hand."""
from __future__ import annotations

import datetime as dt

import pytest

from projects import UNPARTITIONED_FIVETRAN_RELEASE, load_reports, release_project, report
from reference import MILLISECOND as MS
from reference import TMAX

T = {n: dt.datetime(2026, 1, n) for n in range(1, 10)}
S = {n: dt.datetime(2026, 2, n) for n in range(1, 20)}  # synced times
BATCH = "id int, col1 string, col2 string, _fivetran_start timestamp, _fivetran_op string, _fivetran_synced timestamp"
ORDER = "id, _fivetran_start"


def model(project, name="ft_hist", unique_key="['id']", options=", unmodified_string='unmod'", source="batch"):
    project.model(name, f"""
        {{{{ config(materialized='fivetran_history', unique_key={unique_key}{options}) }}}}
        select * from {{{{ target.schema }}}}.{source}
        """)
    project.write("models/history.yml", """
        version: 2
        models:
          - name: ft_hist
            columns:
              - name: col2
                data_type: int
        """)


def apply(project, events, ddl=BATCH, at="2026-03-01 00:00:00"):
    project.create_source("batch", ddl, events)
    return project.run("run", variables={"load_timestamp": at})


def state(project, name="ft_hist"):
    return project.table(name, "*", ORDER), project.commits(name)


def test_worked_example_replay_and_types(project):
    model(project)
    result = apply(project, [
        (1, "abc", "1", T[1], "upsert", S[10]), (1, "pqr", "2", T[2], "upsert", S[11]),
        (2, "mno", "3", T[2], "upsert", S[13]),
    ])
    assert load_reports(result) == {"ft_hist": report(3, 0, 0, "versions")}
    assert project.table("ft_hist", "*", ORDER) == [
        (1, "abc", 1, T[1], T[2] - MS, False, S[10]),
        (1, "pqr", 2, T[2], TMAX, True, S[11]),
        (2, "mno", 3, T[2], TMAX, True, S[13]),
    ]
    batch = [
        (1, "xyz", "unmod", T[3], "update", S[17]), (1, "def", "unmod", T[5], "update", S[19]),
        (2, "unmod", "1000", T[4], "update", S[18]),
    ]
    result = apply(project, batch)
    final = [
        (1, "abc", 1, T[1], T[2] - MS, False, S[10]),
        (1, "pqr", 2, T[2], T[3] - MS, False, S[11]),
        (1, "xyz", 2, T[3], T[5] - MS, False, S[17]),
        (1, "def", 2, T[5], TMAX, True, S[19]),
        (2, "mno", 3, T[2], T[4] - MS, False, S[13]),
        (2, "mno", 1000, T[4], TMAX, True, S[18]),
    ]
    assert project.table("ft_hist", "*", ORDER) == final
    # versions (1, xyz), (1, def) and (2, 1000) new; (1, pqr) and (2, mno) ended
    assert load_reports(result) == {"ft_hist": report(3, 2, 0, "versions")}
    assert [r[1] for r in project.sql(f"describe {project.schema}.ft_hist")][:3] == ["int", "string", "int"]
    # Replaying the same batch leaves the table as it is, without a commit.
    before = state(project)
    result = apply(project, batch)
    assert state(project) == before
    assert load_reports(result) == {"ft_hist": report(0, 0, 0, "versions")}
    assert project.history("ft_hist")[0]["operation"] == "MERGE"


def test_deletes_gaps_redelivery_and_composite_key(project):
    ddl = "region string, id int, val string, _fivetran_start timestamp, _fivetran_op string"
    model(project, unique_key="['region', 'id']", options="")
    apply(project, [
        ("eu", 1, "a", T[1], "upsert"),
        ("eu", 2, "b", T[1], "upsert"),
        ("us", 1, "c", T[1], "upsert"),
        ("us", 2, "d", T[1], "upsert"),
    ], ddl, at="2026-03-01 00:00:00")
    synced_1 = dt.datetime(2026, 3, 1)
    apply(project, [
        # a delete inside the batch: closes at the delete, a gap until the next upsert
        ("eu", 1, "a2", T[3], "upsert"), ("eu", 1, None, T[4], "delete"), ("eu", 1, "a3", T[6], "upsert"),
        # only a delete: closes the active version at the delete's time exactly
        ("eu", 2, None, T[2], "delete"),
        # a delete with no current version does nothing
        ("us", 1, None, T[2], "delete"), ("us", 1, None, T[3], "delete"),
        # an update with no version before it is ignored (region 'ap' is new)
        ("ap", 9, "x", T[2], "update"),
    ], ddl, at="2026-03-02 00:00:00")
    synced_2 = dt.datetime(2026, 3, 2)
    expected = [
        ("eu", 1, "a", T[1], T[3] - MS, False, synced_1),
        ("eu", 1, "a2", T[3], T[4], False, synced_2),
        ("eu", 1, "a3", T[6], TMAX, True, synced_2),
        ("eu", 2, "b", T[1], T[2], False, synced_1),
        ("us", 1, "c", T[1], T[2], False, synced_1),
        ("us", 2, "d", T[1], TMAX, True, synced_1),
    ]
    assert project.table("ft_hist", "*", "region, id, _fivetran_start") == expected
    # Re-delivery: events from T[3] on again, with other values; versions from T[3] are replaced,
    # and the version before them (ended by the old T[3] event) ends at the new first event.
    apply(project, [
        ("eu", 1, "a2-fixed", T[3], "upsert"), ("eu", 1, "a4", T[5], "upsert"),
    ], ddl, at="2026-03-03 00:00:00")
    synced_3 = dt.datetime(2026, 3, 3)
    assert project.table("ft_hist", "*", "region, id, _fivetran_start")[:3] == [
        ("eu", 1, "a", T[1], T[3] - MS, False, synced_1),
        ("eu", 1, "a2-fixed", T[3], T[5] - MS, False, synced_3),
        ("eu", 1, "a4", T[5], TMAX, True, synced_3),
    ]


def test_overlap_with_an_inactive_version_is_shortened_and_updates_fill_after_a_delete(project):
    model(project)
    apply(project, [(1, "a", "1", T[1], "upsert", S[1]), (1, None, None, T[5], "delete", S[2])])
    assert project.table("ft_hist", "*", ORDER) == [(1, "a", 1, T[1], T[5], False, S[1])]
    # A late event at T[3]: the inactive version that ended at T[5] would overlap it, so it ends at T[3] - 1 ms;
    # the update fills col2 from it although it is inactive.
    apply(project, [(1, "b", "unmod", T[3], "update", S[3])])
    assert project.table("ft_hist", "*", ORDER) == [
        (1, "a", 1, T[1], T[3] - MS, False, S[1]),
        (1, "b", 1, T[3], TMAX, True, S[3]),
    ]


@pytest.mark.parametrize("walked", [False, True], ids=["one event per key", "walked"])
def test_a_batch_changes_the_versions_that_end_or_begin_at_or_after_its_first_event(project, walked):
    # The MERGE matches only those versions (Delta skips the files of the others): each of
    # them is one here, at the bound, and the versions that ended before the batch stay.
    model(project)
    us = dt.timedelta(microseconds=1)
    apply(project, [
        (1, "a", "1", T[1], "upsert", S[1]), (1, None, None, T[5], "delete", S[2]),
        # less than 1 ms apart: the first version ends before it begins, 1 ms before the second
        (2, "p", "2", T[5] + 200 * us, "upsert", S[3]), (2, "q", "3", T[5] + 500 * us, "upsert", S[4]),
        (3, "x", "4", T[1], "upsert", S[5]),
        (4, "y", "5", T[1], "upsert", S[6]), (4, None, None, T[2], "delete", S[7]),
    ])
    assert project.table("ft_hist", "*", ORDER) == [
        (1, "a", 1, T[1], T[5], False, S[1]),
        (2, "p", 2, T[5] + 200 * us, T[5] + 500 * us - MS, False, S[3]),
        (2, "q", 3, T[5] + 500 * us, TMAX, True, S[4]),
        (3, "x", 4, T[1], TMAX, True, S[5]),
        (4, "y", 5, T[1], T[2], False, S[6]),
    ]
    # The batch's first event is T[5]: key 1's version ends there (it is current, and closed
    # 1 ms before the upsert), key 2's first version begins after it and ends before it (both
    # of key 2's versions are replaced); key 4's version ended before it.
    batch = [(1, "b", "6", T[5], "upsert", S[8]), (2, "r", "7", T[5], "upsert", S[9])]
    walked_rows = [(5, "z", "8", T[6], "upsert", S[10]), (5, "z2", "9", T[7], "upsert", S[11])] if walked else []
    result = apply(project, batch + walked_rows, at="2026-03-02 00:00:00")
    assert project.table("ft_hist", "*", ORDER) == [
        (1, "a", 1, T[1], T[5] - MS, False, S[1]),
        (1, "b", 6, T[5], TMAX, True, S[8]),
        (2, "r", 7, T[5], TMAX, True, S[9]),
        (3, "x", 4, T[1], TMAX, True, S[5]),
        (4, "y", 5, T[1], T[2], False, S[6]),
    ] + ([(5, "z", 8, T[6], T[7] - MS, False, S[10]), (5, "z2", 9, T[7], TMAX, True, S[11])] if walked else [])
    assert load_reports(result) == {"ft_hist": report(4 if walked else 2, 1, 2, "versions")}


def partition_columns(project, name="ft_hist") -> list[str]:
    return project.sql(f"describe detail {project.schema}.{name}")[0][7]  # partitionColumns


def test_a_table_built_unpartitioned_by_the_release_is_laid_out_by_active_flag_on_its_next_load(project, tmp_path):
    released = release_project(tmp_path / "release", project.schema, UNPARTITIONED_FIVETRAN_RELEASE)
    model(released)
    apply(released, [(1, "a", "1", T[1], "upsert", S[1]), (2, "b", "2", T[1], "upsert", S[1]),
                     (3, "c", "3", T[1], "upsert", S[1])])
    apply(released, [(1, "a2", "unmod", T[3], "update", S[2]), (2, None, None, T[3], "delete", S[2])])
    assert partition_columns(project) == []
    commits = project.commits("ft_hist")

    # this release's first load: the table rewritten partitioned, then the batch applied, in which
    # key 1's event is late (its versions from T[2] on replaced, the inactive one before it closed),
    # key 2's update follows its delete (filled from the inactive version), key 3's is in order
    model(project)
    batch = [(1, "a1", "unmod", T[2], "update", S[3]), (2, "b2", "unmod", T[5], "update", S[3]),
             (3, "c2", "7", T[4], "upsert", S[3]), (4, "d", "4", T[4], "upsert", S[3])]
    result = apply(project, batch)
    assert load_reports(result) == {"ft_hist": report(4, 2, 1, "versions")}
    assert project.table("ft_hist", "*", ORDER) == [
        (1, "a", 1, T[1], T[2] - MS, False, S[1]),
        (1, "a1", 1, T[2], TMAX, True, S[3]),
        (2, "b", 2, T[1], T[3], False, S[1]),
        (2, "b2", 2, T[5], TMAX, True, S[3]),
        (3, "c", 3, T[1], T[4] - MS, False, S[1]),
        (3, "c2", 7, T[4], TMAX, True, S[3]),
        (4, "d", 4, T[4], TMAX, True, S[3]),
    ]
    assert partition_columns(project) == ["_fivetran_active"]
    # the rewrite is one commit of the same table, before the load's; the release's table still readable
    history = project.history("ft_hist")
    assert [h["operation"] for h in history[:2]] == ["MERGE", "REPLACE TABLE AS SELECT"]
    assert project.commits("ft_hist") == commits + 2
    assert project.sql(f"select count(*) from {project.schema}.ft_hist version as of {history[2]['version']}") == [(4,)]
    # the next load of the same batch finds the layout in place: no rewrite, nothing to write
    result = apply(project, batch)
    assert load_reports(result) == {"ft_hist": report(0, 0, 0, "versions")}
    assert project.commits("ft_hist") == commits + 2


def test_bad_batches_fail_clearly_and_leave_the_table(project):
    model(project)
    apply(project, [(1, "a", "1", T[1], "upsert", S[1]), (2, "b", "2", T[1], "upsert", S[1])])
    before = state(project)
    cases = [
        ([(1, "x", "1", T[2], "upsert", S[2]), (1, "y", "1", T[2], "update", S[2])],
         "the key and _fivetran_start (id, _fivetran_start) is duplicated for 1 key(s) in the select, e.g. (1, 2026-01-02 00:00:00) x2"),
        ([(None, "x", "1", T[2], "upsert", S[2])], "the key and _fivetran_start (id, _fivetran_start) is NULL in 1 row(s)"),
        ([(1, "x", "1", None, "upsert", S[2])], "the key and _fivetran_start (id, _fivetran_start) is NULL in 1 row(s)"),
        ([(1, "x", "1", T[2], "insert", S[2]), (2, "x", "1", T[2], None, S[2])],
         "unknown operation in _fivetran_op: 'insert' x1, NULL x1; allowed: upsert, update, delete"),
    ]
    for events, message in cases:
        project.create_source("batch", BATCH, events)
        assert message in project.fail("run")
        assert state(project) == before
    project.create_source("batch", "id int, col1 string, col2 string, _fivetran_start timestamp", [(1, "x", "1", T[2])])
    assert "the select has no column _fivetran_op (op_column)" in project.fail("run")
    assert state(project) == before
