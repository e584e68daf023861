"""scd2_hist with out_of_order='reconcile': a load older than the table's newest
is applied where it belongs in time, and the table equals loading the same
snapshots in time order (tables computed by hand)."""
from __future__ import annotations

import datetime as dt

from historize_tools import dbt_runner as dbt

from projects import load_reports, report

T1, T2, T3, T4, T4B, T5 = (dt.datetime(2026, 3, 1, 6), dt.datetime(2026, 3, 2, 6), dt.datetime(2026, 3, 3, 6),
                           dt.datetime(2026, 3, 4, 6), dt.datetime(2026, 3, 4, 18), dt.datetime(2026, 3, 5, 6))
COLUMNS = "id int, name string"
SHOWN = "id, name, version_started_at, version_ended_at, version_state, load_run_id"
ORDER = "id, version_started_at"
SNAPSHOTS = {
    T1: [(1, "a"), (2, "b"), (3, "c")],
    T2: [(1, "a"), (2, "b2"), (4, "d")],  # 2 changed, 3 deleted, 4 new
    T3: [(1, "a"), (2, "b2"), (3, "c"), (4, "d")],  # 3 back
    T4: [(1, "a1"), (2, "b2"), (4, "d")],  # 1 changed, 3 deleted again
}
RUNS = {T1: "r1", T2: "r2", T3: "r3", T4: "r4", T4B: "r4b", T5: "r5"}
IN_TIME_ORDER = [
    (1, "a", T1, T4, "changed", "r4"),
    (1, "a1", T4, None, "changed", "r4"),
    (2, "b", T1, T2, "changed", "r2"),
    (2, "b2", T2, None, "changed", "r2"),
    (3, "c", T1, T2, "deleted", "r2"),
    (3, "c", T3, T4, "deleted", "r4"),
    (4, "d", T2, None, "new", "r2"),
]
INVARIANTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded")


def setup(project, out_of_order="reconcile"):
    project.model("hist", f"""
        {{{{ config(materialized='scd2_hist', unique_key='id', out_of_order='{out_of_order}') }}}}
        select * from {{{{ target.schema }}}}.snapshot
        """)
    tests = "".join(f"\n      - historize.{test}" for test in INVARIANTS)
    project.write("models/hist.yml", f"version: 2\nmodels:\n  - name: hist\n    data_tests:{tests}\n")


def variables(at):
    return {"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S.%f"), "load_run_id": RUNS[at]}


def load(project, rows, at, select="hist"):
    project.create_source("snapshot", COLUMNS, rows)
    return load_reports(project.run("run", "-s", select, variables=variables(at)))["hist"]


def ledger(project):
    return project.table("historize_loads", "load_timestamp, load_run_id, outcome, new_keys, changed_keys, deleted_keys",
                         "recorded_at, load_timestamp")


def test_a_late_load_ends_as_loading_in_time_order(project):
    setup(project)
    for at in (T1, T3, T4):
        load(project, SNAPSHOTS[at], at)
    commits = project.commits("hist")

    # T2 arrives after T4: 2's change moves from T3 to T2, 3's version spanning T2 splits
    # (deleted at T2, back at T3), 4 starts at T2; 1 is unchanged at T2.
    assert load(project, SNAPSHOTS[T2], T2) == report(1, 1, 1, "late, before 2026-03-03 06:00:00.000000")
    assert project.table("hist", SHOWN, ORDER) == IN_TIME_ORDER
    assert project.commits("hist") == commits + 1
    assert project.history("hist")[0]["operation"] == "MERGE"
    keys = project.table("hist", "hist_key, id, version_started_at", ORDER)
    assert keys == [(project.sql(f"select unhex(left(sha2(concat(length('{i}'), ':', '{i}', length(cast(timestamp'{s}' "
                                 f"as string)), ':', cast(timestamp'{s}' as string)), 256), 32))")[0][0], i, s) for _, i, s in keys]
    project.run("test", "-s", "hist")

    # The same late load again changes nothing; another snapshot at T2 is refused, naming both loads.
    with project.unchanged("hist"):
        assert load(project, SNAPSHOTS[T2], T2) == report(0, 0, 0, "late, before 2026-03-03 06:00:00.000000")
        project.create_source("snapshot", COLUMNS, [(1, "a"), (2, "b2")])
        message = project.fail("run", "-s", "hist", variables={**variables(T2), "load_run_id": "r2-again"})
    assert ("load_timestamp 2026-03-02 06:00:00.000000 (load_run_id r2-again) was already loaded into "
            f"{project.schema}.hist by load_run_id r2, with other data: 1 key(s) differ, e.g. (4) deleted; "
            "a load already applied is not restated. Nothing was written") in message

    # A load that changes nothing still ends a later-arriving version: T5 writes nothing, then
    # T4B (between T4 and T5) brings key 5, which T5 does not have.
    with project.unchanged("hist"):
        assert load(project, SNAPSHOTS[T4], T5) == report(0, 0, 0, "merge")
    assert load(project, SNAPSHOTS[T4] + [(5, "e")], T4B) == report(1, 0, 0, "late, before 2026-03-05 06:00:00.000000")
    assert project.table("hist", SHOWN, ORDER) == IN_TIME_ORDER + [(5, "e", T4B, T5, "deleted", "r5")]
    project.run("test", "-s", "hist")

    assert ledger(project) == [
        (T1, "r1", "written", 3, 0, 0),
        (T3, "r3", "written", 1, 1, 0),
        (T4, "r4", "written", 0, 1, 1),
        (T2, "r2", "written", 1, 1, 1),
        (T2, "r2", "nothing to write", 0, 0, 0),
        (T5, "r5", "nothing to write", 0, 0, 0),
        (T4B, "r4b", "written", 1, 0, 0),
    ]


def test_without_reconcile_a_late_load_is_refused(project):
    setup(project, "refuse")
    load(project, SNAPSHOTS[T1], T1)
    load(project, SNAPSHOTS[T3], T3)
    with project.unchanged("hist"):
        project.create_source("snapshot", COLUMNS, SNAPSHOTS[T2])
        message = project.fail("run", "-s", "hist", variables=variables(T2))
    assert ("load_timestamp 2026-03-02 06:00:00.000000 is older than 2026-03-03 06:00:00, the newest time already in "
            f"{project.schema}.hist; loads must come in time order. Nothing was written") in message
    assert not project.sql(f"show tables in {project.schema} like 'historize_loads'")

    for options, error in (
        ("out_of_order='sort'", "option 'out_of_order' is 'sort'; allowed: refuse, reconcile"),
        ("out_of_order='reconcile', strategy='ordered'",
         "model hist: out_of_order 'reconcile' needs strategy 'merge' (a late load rewrites versions after it in one "
         "MERGE); strategy is 'ordered'"),
    ):
        project.model("hist", f"{{{{ config(materialized='scd2_hist', unique_key='id', {options}) }}}} "
                              "select * from {{ target.schema }}.snapshot")
        with project.unchanged("hist"):
            assert error in project.fail("run", "-s", "hist", variables=variables(T3))


def test_a_late_load_killed_after_its_write_is_recorded_by_its_rerun(project):
    setup(project)
    for at in (T1, T3):
        load(project, SNAPSHOTS[at], at)

    def kill_after_the_merge(event) -> None:
        """Fails the run right after its MERGE completed, before its record (as a lost connection would)."""
        if event.info.name == "SQLQuery" and event.data.node_info.unique_id.endswith(".hist"):
            kill_after_the_merge.sql = event.data.sql.split("*/", 1)[-1].split()[:2]  # after dbt's query comment
        if event.info.name == "SQLQueryStatus" and kill_after_the_merge.sql == ["merge", "into"]:
            raise RuntimeError("killed after the merge")

    kill_after_the_merge.sql = None
    project.create_source("snapshot", COLUMNS, SNAPSHOTS[T2])
    killed = project.run("run", "-s", "hist", variables=variables(T2), callbacks=[kill_after_the_merge],
                         expect_success=False)
    assert not killed.success and "killed after the merge" in dbt.failure_messages(killed)
    in_time_order = [
        (1, "a", T1, None, "new", "r1"),
        (2, "b", T1, T2, "changed", "r2"),
        (2, "b2", T2, None, "changed", "r2"),
        (3, "c", T1, T2, "deleted", "r2"),
        (3, "c", T3, None, "new", "r3"),
        (4, "d", T2, None, "new", "r2"),
    ]
    assert project.table("hist", SHOWN, ORDER) == in_time_order
    assert [row[:2] for row in ledger(project)] == [(T1, "r1"), (T3, "r3")]

    with project.unchanged("hist"):
        assert load(project, SNAPSHOTS[T2], T2) == report(0, 0, 0, "late, before 2026-03-03 06:00:00.000000")
    assert [row[:3] for row in ledger(project)] == [(T1, "r1", "written"), (T3, "r3", "written"),
                                                    (T2, "r2", "nothing to write")]
