"""The run ledger (`historize.record_runs`, an on-run-end hook): one row per
run of a history model, whatever its outcome: written, nothing to write,
refused with its error, overtaken by another writer. Its versions and row
counts are checked against the table's Delta history read by version here,
and the rows by hand."""
from __future__ import annotations

import datetime as dt

from historize_tools import dbt_runner as dbt

from projects import PROJECT_YML, load_reports

# The column of the guard's one-row relation (macros/common/guard.sql).
GUARD_COLUMN = "_historize_unchanged"
HOOK = 'on-run-end: ["{{ historize.record_runs(results) }}"]\n'
SOURCE = "id int, name string"
HIST = "{{ config(materialized='scd2_hist', unique_key='id') }} select * from {{ target.schema }}.snapshot"
# with an audit, so that its load reads the dimension before its writes, guarded
DIM = "{{ config(materialized='scd_type6', unique_key='id', audit=true) }} select * from {{ target.schema }}.snapshot"
COLUMNS = ("table_name, model, outcome, new_keys, changed_keys, deleted_keys, rows_inserted, rows_updated, "
           "rows_deleted, version_before, version_after, load_timestamp, load_run_id, started_at, ended_at")


def at(day: int) -> dict:
    return {"load_timestamp": f"2026-01-0{day} 06:00:00", "load_run_id": f"r{day}"}


def version(project, name: str) -> int | None:
    """The table's newest Delta version, None when it does not exist."""
    if not project.sql(f"show tables in {project.schema} like '{name}'"):
        return None
    return max(commit["version"] for commit in project.history(name))


def delta_rows(project, name: str, before: int | None, after: int) -> tuple[int, int, int]:
    """Rows inserted, updated and deleted by the table's commits after `before` up to `after`,
    from Delta's operation metrics."""
    inserted = updated = deleted = 0
    for commit in project.history(name):
        if (before is not None and commit["version"] <= before) or commit["version"] > after:
            continue
        metrics = {key: int(value) for key, value in (commit["operationMetrics"] or {}).items()}
        if commit["operation"] == "MERGE":
            inserted += metrics.get("numTargetRowsInserted", 0)
            updated += metrics.get("numTargetRowsUpdated", 0)
            deleted += metrics.get("numTargetRowsDeleted", 0)
        else:
            inserted += 0 if commit["operation"] in ("UPDATE", "DELETE") else metrics.get("numOutputRows", 0)
            updated += metrics.get("numUpdatedRows", 0)
            deleted += metrics.get("numDeletedRows", 0)
    return inserted, updated, deleted


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def ledger(project) -> list[tuple]:
    return project.sql(f"select {COLUMNS} from {project.schema}.historize_runs order by load_run_id, model, started_at")


def test_every_run_of_a_history_model_is_recorded_with_its_outcome(project):
    project.write("dbt_project.yml", PROJECT_YML + HOOK)
    project.model("customers_hist", HIST)
    project.model("customers_dim", DIM)
    expected: list[tuple] = []
    windows: list[tuple] = []  # each run's invocation, from just before to just after

    def load(day: int, rows, *select: str, callbacks=(), expect_success=True):
        project.create_source("snapshot", SOURCE, rows)
        names = select or ("customers_hist", "customers_dim")
        before = {name: version(project, name) for name in names}
        started = utc_now()
        result = project.run("run", *(("-s", *select) if select else ()), variables=at(day), callbacks=callbacks,
                             expect_success=expect_success)
        windows.append((started, utc_now()))
        return result, before

    def recorded(name, before, outcome, keys, rows, day):
        after = version(project, name)
        expected.append((name, name, outcome, *keys, *rows, before, after, dt.datetime(2026, 1, day, 6), f"r{day}",
                         windows[-1]))
        return after

    # Load 1 creates both tables; load 2 changes key 2, adds 3; load 3 changes nothing.
    result, before = load(1, [(1, "a"), (2, "b")])
    for name in ("customers_dim", "customers_hist"):
        recorded(name, before[name], "written", (2, 0, 0),
                 delta_rows(project, name, before[name], version(project, name)), 1)
    assert [row[3:9] for row in expected] == [(2, 0, 0, 2, 0, 0)] * 2
    result, before = load(2, [(1, "a"), (2, "B"), (3, "c")])
    # scd_type6 counts versions: key 2's new one and key 3's inserted, key 2's old one closed
    for name, counts in (("customers_dim", (2, 1, 0)), ("customers_hist", (1, 1, 0))):
        recorded(name, before[name], "written", counts,
                 delta_rows(project, name, before[name], version(project, name)), 2)
    # scd2_hist closes key 2's version and inserts two: one MERGE
    assert expected[-1][6:11] == (2, 1, 0, before["customers_hist"], before["customers_hist"] + 1)
    result, before = load(3, [(1, "a"), (2, "B"), (3, "c")])
    assert {load_reports(result)[name]["code"] for name in before} == {"nothing to write"}
    for name in ("customers_dim", "customers_hist"):
        recorded(name, before[name], "nothing to write", (0, 0, 0), (0, 0, 0), 3)

    # Load 4 refused (a key twice): its error is dbt's message for the model.
    result, before = load(4, [(1, "a"), (1, "x")], "customers_hist", expect_success=False)
    error = dbt.failure_messages(result).removeprefix("customers_hist: ")
    assert "historize: " in error and "duplicate" in error.lower()
    recorded("customers_hist", before["customers_hist"], "refused", (None, None, None), (0, 0, 0), 4)

    # Load 4 of the scd_type6 model, overtaken: another writer commits between its read and
    # its first write, the audit's (from dbt's thread, which has no active session of its own).
    # (A load that is its MERGE alone reads the table in that MERGE only: see test_concurrency.py.)
    session = dbt.spark()

    def other_writer(event) -> None:
        if event.info.name == "SQLQuery" and GUARD_COLUMN in event.data.sql and not overtaken:
            overtaken.append(event.data.sql)
            session.sql(f"update {project.schema}.customers_dim set id = id where id = 1")

    overtaken: list[str] = []
    result, before = load(4, [(1, "a"), (3, "c")], "customers_dim", callbacks=[other_writer], expect_success=False)
    assert overtaken, "the other writer never ran"
    conflict = dbt.failure_messages(result)
    assert "was written by another run after version" in conflict
    # The run's versions are the table's at its start and end: the other writer's commit is between.
    recorded("customers_dim", before["customers_dim"], "conflict", (None, None, None), (0, 1, 0), 4)
    assert expected[-1][9:11] == (before["customers_dim"], before["customers_dim"] + 1)

    found = ledger(project)
    expected.sort(key=lambda row: (row[12], row[1]))  # as ledger() orders them: by run id, then model
    assert [row[:-2] for row in found] == [row[:-1] for row in expected]
    # Each run's start and end, in UTC, within its invocation.
    for (*_, started, ended), (*_, (invoked, returned)) in zip(found, expected):
        assert invoked <= started < ended <= returned
    errors = project.sql(f"select outcome, error from {project.schema}.historize_runs where error is not null "
                         f"order by started_at")
    assert [outcome for outcome, _ in errors] == ["refused", "conflict"]
    assert errors[0][1] == error
    assert "was written by another run after version" in errors[1][1]
