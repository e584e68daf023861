"""Bitemporal scd2_hist (meta bitemporal: true) from snapshots: each rule of
docs/bitemporal.md against tables computed by hand. Business time is the load's
load_timestamp (T2, T3, ...), recorded time the var recorded_at (R1, R2, ...)."""
from __future__ import annotations

import datetime as dt

from probes import StatementProbe, WriteBeforeMerge, schema_folder, tables_and_versions
from projects import load_reports, report

from historize_tools import dbt_runner as dbt

COLUMNS = "id int, name string"
CONFIG = "materialized='scd2_hist', unique_key='id', meta={'bitemporal': true}"
SHOWN = "id, name, version_started_at, version_ended_at, version_state, recorded_at, superseded_at"
ORDER = "id, recorded_at, version_started_at"
T = {n: dt.datetime(2026, 1, n, 6) for n in range(1, 8)}
R = {n: dt.datetime(2026, 2, n, 12) for n in range(1, 8)}
DETAIL = "versions recorded (new) and superseded (changed)"


def snapshot_model(project, config=CONFIG, name="hist"):
    project.model(name, f"{{{{ config({config}) }}}}\nselect id, name from {{{{ target.schema }}}}.snap")


def at_var(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S")


def load(project, rows, at, run_id, recorded, expect_success=True, callbacks=()):
    project.create_source("snap", COLUMNS, rows)
    return project.run("run", "-s", "hist", variables={"load_timestamp": at_var(at), "load_run_id": run_id,
                                                       "recorded_at": at_var(recorded)},
                       expect_success=expect_success, callbacks=callbacks)


def ledger(project):
    return project.sql(f"select load_timestamp, load_run_id, outcome from {project.schema}.historize_loads "
                       "order by recorded_at, load_timestamp")


# Loads at T2 and T4 in time order, then T3 late, then T4 restated.
LOAD_T2 = [(1, "a"), (2, "x")]
AFTER_T2 = [
    (1, "a", T[2], None, "new", R[1], None),
    (2, "x", T[2], None, "new", R[1], None),
]
LOAD_T4 = [(1, "b"), (2, "x"), (3, "p")]
AFTER_T4 = [
    (1, "a", T[2], None, "new", R[1], R[2]),  # believed open until R2
    (1, "a", T[2], T[4], "changed", R[2], None),  # then closed at T4
    (1, "b", T[4], None, "changed", R[2], None),
    (2, "x", T[2], None, "new", R[1], None),  # unchanged: never rewritten
    (3, "p", T[4], None, "new", R[2], None),
]
LATE_T3 = [(1, "a"), (2, "y")]  # key 1 as it was, key 2 changed between T2 and T4, key 3 not yet there
AFTER_T3 = [
    (1, "a", T[2], None, "new", R[1], R[2]),
    (1, "a", T[2], T[4], "changed", R[2], None),
    (1, "b", T[4], None, "changed", R[2], None),
    (2, "x", T[2], None, "new", R[1], R[3]),
    (2, "x", T[2], T[3], "changed", R[3], None),
    (2, "y", T[3], T[4], "changed", R[3], None),
    (2, "x", T[4], None, "changed", R[3], None),  # back to x at T4, the next load
    (3, "p", T[4], None, "new", R[2], None),
]
RESTATED_T4 = [(1, "a"), (2, "x"), (3, "p")]  # key 1 did not change at T4 after all
AFTER_RESTATED = [
    (1, "a", T[2], None, "new", R[1], R[2]),
    (1, "a", T[2], T[4], "changed", R[2], R[4]),
    (1, "b", T[4], None, "changed", R[2], R[4]),
    (1, "a", T[2], None, "new", R[4], None),  # open again, as it began
    (2, "x", T[2], None, "new", R[1], R[3]),
    (2, "x", T[2], T[3], "changed", R[3], None),
    (2, "y", T[3], T[4], "changed", R[3], None),
    (2, "x", T[4], None, "changed", R[3], None),
    (3, "p", T[4], None, "new", R[2], None),
]


def test_late_loads_and_restatements_keep_every_belief(project):
    snapshot_model(project)
    result = load(project, LOAD_T2, T[2], "r1", R[1])
    assert project.table("hist", SHOWN, ORDER) == AFTER_T2
    assert [c[0] for c in project.columns("hist")] == [
        "hist_key", "id", "name", "row_hash", "version_started_at", "version_ended_at", "version_state",
        "load_run_id", "loaded_at", "recorded_at", "superseded_at"]
    properties = dict(project.sql(f"show tblproperties {project.schema}.hist"))
    assert (properties["historize.bitemporal"], properties["historize.partitioned_by"]) == (
        "true", "superseded_at,version_ended_at")

    commits = project.commits("hist")
    result = load(project, LOAD_T4, T[4], "r2", R[2])
    assert project.table("hist", SHOWN, ORDER) == AFTER_T4
    assert load_reports(result)["hist"] == report(3, 1, 0, DETAIL)
    assert project.commits("hist") == commits + 1
    # the row it did not supersede is the one load 1 wrote
    assert project.sql(f"select load_run_id from {project.schema}.hist where id = 2") == [("r1",)]

    result = load(project, LATE_T3, T[3], "r3", R[3])
    assert project.table("hist", SHOWN, ORDER) == AFTER_T3
    assert load_reports(result)["hist"] == report(3, 1, 0, DETAIL)

    result = load(project, RESTATED_T4, T[4], "r4", R[4])
    assert project.table("hist", SHOWN, ORDER) == AFTER_RESTATED
    assert load_reports(result)["hist"] == report(1, 2, 0, DETAIL)

    # the same snapshot recorded again, by another run: nothing changes
    result = load(project, RESTATED_T4, T[4], "r5", R[5])
    assert project.table("hist", SHOWN, ORDER) == AFTER_RESTATED
    assert load_reports(result)["hist"] == report(0, 0, 0, DETAIL)
    assert ledger(project) == [(T[2], "r1", "written"), (T[4], "r2", "written"), (T[3], "r3", "written"),
                               (T[4], "r4", "written"), (T[4], "r5", "nothing to write")]
    # a version key is its key, where it begins and when it was recorded: one per row
    assert project.sql(f"select count(*), count(distinct hist_key) from {project.schema}.hist") == [(9, 9)]


def test_a_restatement_of_the_first_load_reopens_and_recloses_as_the_snapshots_say(project):
    """Restating T2, the first load: key 1 absent (its version now begins at T4, new), key 2
    with T4's row (its change at T3 stays; x from T2 to T3 becomes y), key 4 new at T2 and
    gone at T3."""
    snapshot_model(project)
    for rows, at, run_id, recorded in ((LOAD_T2, T[2], "r1", R[1]), (LOAD_T4, T[4], "r2", R[2]),
                                       (LATE_T3, T[3], "r3", R[3])):
        load(project, rows, at, run_id, recorded)
    load(project, [(2, "y"), (4, "m")], T[2], "r4", R[4])
    assert project.table("hist", SHOWN, ORDER) == [
        (1, "a", T[2], None, "new", R[1], R[2]),
        (1, "a", T[2], T[4], "changed", R[2], R[4]),
        (1, "b", T[4], None, "changed", R[2], None),  # unchanged: its end and state stay
        (1, "a", T[3], T[4], "changed", R[4], None),  # key 1 first seen at T3
        (2, "x", T[2], None, "new", R[1], R[3]),
        (2, "x", T[2], T[3], "changed", R[3], R[4]),
        (2, "y", T[3], T[4], "changed", R[3], R[4]),
        (2, "x", T[4], None, "changed", R[3], None),
        (2, "y", T[2], T[4], "changed", R[4], None),  # y from T2 now
        (3, "p", T[4], None, "new", R[2], None),
        (4, "m", T[2], T[3], "deleted", R[4], None),
    ]


def test_a_bitemporal_snapshot_load_killed_after_any_write_ends_correct_when_rerun(project):
    """A load in time order (T4) and a late one (T3), each killed after its MERGE, then its
    rerun killed after its record in the ledger, then rerun whole: each ends as the load
    uninterrupted, the current belief never holds a key open twice, and the ledger holds
    the load (a rerun records it again: readers take each instant once)."""
    snapshot_model(project)
    load(project, LOAD_T2, T[2], "r1", R[1])
    schema_dir = schema_folder(project)
    probe = lambda: tables_and_versions(schema_dir)  # noqa: E731
    for rows, at, run_id, recorded, expected in ((LOAD_T4, T[4], "r2", R[2], AFTER_T4),
                                                 (LATE_T3, T[3], "r3", R[3], AFTER_T3)):
        killed_after = []
        repeat = None
        for _ in range(2):  # killed after the MERGE, then (the MERGE passed over) after the record
            killer = StatementProbe("hist", probe, kill=True, repeat=repeat).started()
            result = load(project, rows, at, run_id, recorded, expect_success=False, callbacks=[killer])
            assert not result.success and "injected failure after statement" in dbt.failure_messages(result)
            killed_after.append(killer.killed_after.split("*/", 1)[-1].split()[:2])
            repeat = killer.killed_after
            assert project.table("hist", SHOWN, ORDER) == expected
            assert project.sql(f"select id from {project.schema}.hist where version_ended_at is null "
                               "and superseded_at is null group by id having count(*) > 1") == []
        assert killed_after == [["merge", "into"], ["insert", "into"]]
        assert load_reports(load(project, rows, at, run_id, recorded))["hist"] == report(0, 0, 0, DETAIL)
        assert project.table("hist", SHOWN, ORDER) == expected
    assert ledger(project) == [(T[2], "r1", "written"), (T[4], "r2", "nothing to write"),
                               (T[4], "r2", "nothing to write"), (T[3], "r3", "nothing to write"),
                               (T[3], "r3", "nothing to write")]


def test_snapshot_refusals_write_nothing(project):
    snapshot_model(project)
    load(project, LOAD_T2, T[2], "r1", R[2])
    schema = project.schema
    project.create_source("snap", COLUMNS, LOAD_T4)
    with project.unchanged("hist", "historize_loads"):
        failures = project.failures("run", "-s", "hist", variables={
            "load_timestamp": at_var(T[4]), "load_run_id": "r2", "recorded_at": at_var(R[1])})
        assert (f"historize: model hist: recorded_at 2026-02-01 12:00:00.000000 is older than "
                f"2026-02-02 12:00:00.000000, the newest recorded time of {schema}.hist; recorded time only moves "
                "forward. Nothing was written") in failures["hist"]
        for rows, error in (([(1, "a"), (None, "c")], "unique_key (id) is NULL in 1 row(s) of the select; nothing "
                                                        "was written"),
                            ([(1, "a"), (1, "b")], "unique_key (id) is duplicated for 1 key(s) in the select, e.g. "
                                                   "(1) x2; nothing was written")):
            project.create_source("snap", COLUMNS, rows)
            failures = project.failures("run", "-s", "hist", variables={
                "load_timestamp": at_var(T[4]), "load_run_id": "r3", "recorded_at": at_var(R[3])})
            assert f"historize: model hist: {error}" in failures["hist"]
    snapshot_model(project, CONFIG.replace("}", ", 'out_of_order': 'refuse'}"), name="refusing")
    snapshot_model(project, CONFIG.replace("}", ", 'adopt_from': 'hist'}"), name="adopting")
    failures = project.failures("run", "-s", "refusing", "adopting", variables={"load_run_id": "r4"})
    assert ("historize: model refusing: bitemporal keeps late loads and restatements as beliefs, so it implies "
            "out_of_order 'reconcile'; out_of_order is 'refuse'") in failures["refusing"]
    assert ("historize: model adopting: adopt_from takes over one timeline; a bitemporal table starts its beliefs "
            "at its first load. Nothing was written") in failures["adopting"]


def test_a_write_between_the_loads_read_and_its_merge_fails_it_and_writes_nothing(project):
    """Another writer commits to the table after the load read its version (for its guard)
    and before its MERGE: the MERGE fails naming the table and the version read, the other
    writer's commit stands, and nothing of the load is written."""
    snapshot_model(project)
    load(project, LOAD_T2, T[2], "r1", R[1])
    session, table = dbt.spark(), f"{project.schema}.hist"
    read = session.sql(f"describe history {table} limit 1").collect()[0]["version"]
    other_writer = WriteBeforeMerge("hist", session, table, f"update {table} set name = 'z' where id = 2")
    result = load(project, LOAD_T4, T[4], "r2", R[2], expect_success=False, callbacks=[other_writer])
    assert other_writer.committed == [read + 1]  # the other write landed between the read and the MERGE
    assert (f"historize: model hist: {table} was written by another run after version {read}, which this run "
            "read; nothing of this run was written to it. Rerun the model") in dbt.failure_messages(result)
    assert project.table("hist", SHOWN, ORDER) == [(1, "a", T[2], None, "new", R[1], None),
                                                   (2, "z", T[2], None, "new", R[1], None)]
    assert session.sql(f"describe history {table} limit 1").collect()[0]["version"] == read + 1
