"""Adopting histories kept by other tools (option adopt_from), against tables computed by
hand: defective snapshots, made by hand as the dbt issues describe them, refused, or
repaired with their rows set aside; an SCD2 table by the columns it names; a Fivetran
history-mode table; a load killed after any statement of an adoption, rerun. Real dbt
snapshots taken over: tests/snapshot_adoption.py."""
from __future__ import annotations

import datetime as dt

from probes import StatementProbe, kill_after_each_write, schema_folder, tables_and_versions

SOURCE = "id int, name string, tier int, updated_at timestamp"
T = {n: dt.datetime(2026, 1, n, 6) for n in range(1, 7)}
U = {n: T[n] - dt.timedelta(hours=1) for n in T}  # when a row's values changed, before load n
ORDER = "id, version_started_at"


DBT_SNAPSHOT = "id int, name string, tier int, updated_at timestamp, dbt_scd_id string, dbt_updated_at timestamp, " \
               "dbt_valid_from timestamp, dbt_valid_to timestamp"


def snapshot_row(key, name, start, end):
    return (key, name, 1, U[1], f"{key}-{start:%d}", start, start, end)


# Each defect the way a dbt issue leaves it: two open versions of key 2 (dbt-core 10864),
# a NULL in the key (11950), a version of key 3 equal to the one before it (11235), and
# versions of key 4 that overlap, which no rule repairs.
DEFECTIVE = [
    snapshot_row(1, "a", T[1], T[2]), snapshot_row(1, "a2", T[2], None),
    snapshot_row(2, "b", T[1], None), snapshot_row(2, "b2", T[2], None),
    snapshot_row(None, "n", T[1], None),
    snapshot_row(3, "c", T[1], T[2]), snapshot_row(3, "c", T[2], T[3]), snapshot_row(3, "c3", T[3], None),
    snapshot_row(4, "d", T[1], T[3]), snapshot_row(4, "d2", T[2], None),
]
REPAIRS = "['null_key', 'two_open_versions', 'unchanged_version']"


def defective_project(project):
    for name in ("snap_refused", "snap_repaired"):
        project.write(f"snapshots/{name}.sql", f"""
            {{% snapshot {name} %}}
            {{{{ config(unique_key='id', strategy='check', check_cols='all', file_format='delta') }}}}
            select * from {{{{ target.schema }}}}.src
            {{% endsnapshot %}}
            """)
    project.create_table("snap_refused", DBT_SNAPSHOT, DEFECTIVE)
    project.create_table("snap_repaired", DBT_SNAPSHOT, [r for r in DEFECTIVE if r[0] != 4])
    for name in ("refused", "repaired"):
        project.model(f"hist_{name}", f"""
            {{{{ config(materialized='scd2_hist', unique_key='id', adopt_from='snap_{name}'{f', adopt_repair={REPAIRS}' if name == 'repaired' else ''}) }}}}
            select id, name, tier, updated_at from {{{{ target.schema }}}}.src
            """)


REPAIRED = [
    (1, "a", T[1], T[2], "changed"), (1, "a2", T[2], None, "changed"),
    (2, "b2", T[2], None, "new"),
    (3, "c", T[1], T[3], "changed"), (3, "c3", T[3], T[4], "deleted"),
]
SET_ASIDE = [
    (None, "n", T[1], None, "null_key", "r4"),
    (2, "b", T[1], None, "two_open_versions", "r4"),
    (3, "c", T[2], T[3], "unchanged_version", "r4"),
]


def test_a_defective_snapshot_is_refused_or_repaired_with_its_rows_set_aside(project):
    defective_project(project)
    project.create_source("src", SOURCE, [(1, "a2", 1, U[1]), (2, "b2", 1, U[1])])
    with project.unchanged("snap_refused", "snap_repaired"):
        failures = project.failures("run", variables={"load_timestamp": "2026-01-04 06:00:00", "load_run_id": "r4"})
    table = f"{project.schema}.snap_refused"
    assert list(failures) == ["hist_refused"]
    assert (
        f"historize: model hist_refused: cannot adopt snapshot snap_refused ({table}): "
        "null_key (a NULL in the unique key (dbt-core 11950: a composite key holding a NULL gets a new row at every "
        "run)): 1 row(s), e.g. (NULL) from 2026-01-01 06:00:00 to open. "
        "two_open_versions (an open version beside another that started later (dbt-core 10864, and 4661 when two runs "
        "overlap)): 1 row(s), e.g. (2) from 2026-01-01 06:00:00 to open. "
        "overlapping_versions (a version that starts before the version before it ends): 1 row(s), "
        "e.g. (4) from 2026-01-02 06:00:00 to open. "
        "unchanged_version (a version equal to the one it follows, which it continues (dbt-core 11235: a value from "
        "NULL to non-NULL)): 1 row(s), e.g. (3) from 2026-01-02 06:00:00 to 2026-01-03 06:00:00. "
        f"Nothing was written; {table} is unchanged.") in failures["hist_refused"]
    assert [table for _, table, temporary in project.sql(f"show tables in {project.schema} like 'hist_refused*'")
            if not temporary] == []
    # the repaired one: the rows each rule sets aside kept, then the load of 2026-01-04
    assert project.table("hist_repaired", "id, name, version_started_at, version_ended_at, version_state",
                         ORDER) == REPAIRED
    assert project.table("hist_repaired__adopt_set_aside", "id, name, dbt_valid_from, dbt_valid_to, historize_defect, "
                         "historize_load_run_id", "historize_defect") == SET_ASIDE


def test_an_adoption_killed_after_any_statement_ends_correct_when_rerun(project):
    defective_project(project)
    (project.path / "models" / "hist_refused.sql").unlink()
    project.create_source("src", SOURCE, [(1, "a2", 1, U[1]), (2, "b2", 1, U[1])])
    schema_dir = schema_folder(project)
    probe = lambda: tables_and_versions(schema_dir)  # noqa: E731
    variables = {"load_timestamp": "2026-01-04 06:00:00", "load_run_id": "r4"}
    reference = StatementProbe("hist_repaired", probe).started()
    project.run("run", variables=variables, callbacks=[reference])
    writing = reference.writes()
    assert len(writing) == 3, writing  # the rows set aside, the table adopted, the load's MERGE
    for name in ("hist_repaired", "hist_repaired__adopt_set_aside"):
        project.sql(f"drop table {project.schema}.{name}")

    def adopted_whole_or_not_at_all(kills):
        tables = [name for name, _ in tables_and_versions(schema_dir)]
        if "hist_repaired" in tables:
            assert project.table("hist_repaired", "id, name, version_started_at, version_ended_at", ORDER) in (
                [r[:4] for r in REPAIRED[:4]] + [(3, "c3", T[3], None)], [r[:4] for r in REPAIRED]), kills

    kills = kill_after_each_write("hist_repaired", probe, writing, lambda callbacks: project.run(
        "run", variables=variables, expect_success=False, callbacks=callbacks), adopted_whole_or_not_at_all)
    assert len(kills) == 3, kills
    assert project.table("hist_repaired", "id, name, version_started_at, version_ended_at, version_state",
                         ORDER) == REPAIRED
    assert project.table("hist_repaired__adopt_set_aside", "id, name, dbt_valid_from, dbt_valid_to, historize_defect, "
                         "historize_load_run_id", "historize_defect") == SET_ASIDE


LEGACY = "customer_id int, name string, eff_from date, eff_to date, is_current string, is_deleted boolean"
FAR = dt.date(9999, 12, 31)
D = {n: dt.date(2026, 1, n) for n in range(1, 5)}


def test_any_scd2_table_is_adopted_by_the_columns_it_names(project):
    """A table kept by a hand-written MERGE job: dates, a far-future end, a current flag
    'Y'/'N' that decides which version is open, and a deletion record (key 2)."""
    project.create_table("dim_customer", LEGACY, [
        (1, "a", D[1], D[2], "N", False), (1, "a2", D[2], FAR, "Y", False),
        (2, "b", D[1], D[3], "N", False), (2, "b", D[3], FAR, "Y", True),
        (3, "c", D[1], FAR, "Y", False),
    ])
    columns = "{'valid_from': 'eff_from', 'valid_to': 'eff_to', 'current_flag': 'is_current', 'deleted': 'is_deleted'}"
    table = "adopt_from=target.schema ~ '.dim_customer'"
    # the options under meta, as the docs give them, or in config()
    for name, options in [("customer_hist", f"meta={{'adopt_from': target.schema ~ '.dim_customer', "
                                            f"'adopt_columns': {columns}}}"),
                          ("without_columns", f"{table}, adopt_columns={{'valid_from': 'eff_from'}}"),
                          ("no_such_snapshot", "adopt_from='customer_snapshot'"),
                          ("no_rule", f"{table}, adopt_columns={columns}, adopt_repair=['overlapping_versions']"),
                          ("repair_alone", "adopt_repair=['null_key']"),
                          ("from_events", f"{table}, adopt_columns={columns}, input='changes', sequence_by='changed_at', "
                                          "deleted_when='false'")]:
        project.model(name, f"""
            {{{{ config(materialized='scd2_hist', unique_key='customer_id', {options}) }}}}
            select customer_id, name from {{{{ target.schema }}}}.customers
            """)
    project.create_source("customers", "customer_id int, name string", [(1, "a2"), (2, "b"), (3, "c3")])
    with project.unchanged("dim_customer"):
        failures = project.failures("run", variables={"load_timestamp": "2026-01-04 06:00:00", "load_run_id": "r4"})
    assert sorted(failures) == ["from_events", "no_rule", "no_such_snapshot", "repair_alone", "without_columns"]
    assert ("historize: model repair_alone: adopt_repair applies with adopt_from, which is not set"
            in failures["repair_alone"])
    assert ("historize: model from_events: adopt_from applies to input 'snapshot'; input is 'changes'"
            in failures["from_events"])
    assert ("historize: model no_such_snapshot: adopt_from 'customer_snapshot': names no snapshot of this project "
            "(its snapshots: none) and no table (schema.table). Nothing was written") in failures["no_such_snapshot"]
    assert ("historize: model no_rule: adopt_repair names overlapping_versions; the defects it repairs: "
            "keyless_deletion_record, null_key, two_open_versions, unchanged_version") in failures["no_rule"]
    assert (f"historize: model without_columns: adopt_from '{project.schema}.dim_customer': a table that is not a "
            "snapshot of this project needs adopt_columns with its valid_from and valid_to columns (and current_flag, "
            "deleted if it has them); adopt_columns is {'valid_from': 'eff_from'}. Nothing was written"
            ) in failures["without_columns"]
    midnight = {n: dt.datetime(2026, 1, n) for n in range(1, 5)}
    assert project.table("customer_hist", "customer_id, name, version_started_at, version_ended_at, version_state",
                         "customer_id, version_started_at") == [
        (1, "a", midnight[1], midnight[2], "changed"), (1, "a2", midnight[2], None, "changed"),
        (2, "b", midnight[1], midnight[3], "deleted"), (2, "b", T[4], None, "new"),
        (3, "c", midnight[1], T[4], "changed"), (3, "c3", T[4], None, "changed"),
    ]


FIVETRAN = "id int, col1 string, _fivetran_start timestamp, _fivetran_end timestamp, _fivetran_active boolean, " \
           "_fivetran_synced timestamp"
EVENTS = "id int, col1 string, _fivetran_start timestamp, _fivetran_op string, _fivetran_synced timestamp"
MS = dt.timedelta(milliseconds=1)
TMAX = dt.datetime(9999, 12, 31, 23, 59, 59, 999000)
S = {n: dt.datetime(2026, 2, n) for n in range(1, 6)}  # synced times


def test_a_fivetran_history_table_is_adopted_then_loaded_or_refused_with_its_defects(project):
    """A history-mode table as Fivetran writes it (intervals closed, a version ending 1 ms
    before the next, at a delete's time, or at tmax while active), taken over by
    fivetran_history, then its batch applied; one with two active versions and an overlap
    is refused."""
    project.create_table("fivetran_orders", FIVETRAN, [
        (1, "a", T[1], T[2] - MS, False, S[1]), (1, "a2", T[2], TMAX, True, S[2]),
        (2, "b", T[1], T[3], False, S[1]),
        (3, "c", T[1], TMAX, True, S[1]),
    ])
    project.create_table("fivetran_broken", FIVETRAN, [
        (1, "a", T[1], TMAX, True, S[1]), (1, "a2", T[2], TMAX, True, S[2]),
        (4, "d", T[1], T[3], False, S[1]), (4, "d2", T[2], TMAX, True, S[2]),
    ])
    for name, table in [("orders_history", "fivetran_orders"), ("broken_history", "fivetran_broken")]:
        project.model(name, f"""
            {{{{ config(materialized='fivetran_history', unique_key='id', adopt_from=target.schema ~ '.{table}') }}}}
            select * from {{{{ target.schema }}}}.events
            """)
    project.create_source("events", EVENTS, [
        (1, "a3", T[5], "upsert", S[5]), (2, "b2", T[5], "upsert", S[5]), (3, None, T[5], "delete", S[5]),
    ])
    with project.unchanged("fivetran_orders", "fivetran_broken"):
        failures = project.failures("run", variables={"load_timestamp": "2026-03-01 00:00:00", "load_run_id": "r1"})
    assert list(failures) == ["broken_history"]
    table = f"{project.schema}.fivetran_broken"
    assert (f"historize: model broken_history: cannot adopt table {table}: two_open_versions (an open version "
            "beside another that started later (dbt-core 10864, and 4661 when two runs overlap)): 1 row(s), e.g. (1) "
            "from 2026-01-01 06:00:00 to 9999-12-31 23:59:59.999. overlapping_versions (a version that starts before "
            "the version before it ends): 1 row(s), e.g. (4) from 2026-01-02 06:00:00 to 9999-12-31 23:59:59.999. "
            f"Nothing was written; {table} is unchanged.") in failures["broken_history"]
    assert project.table("orders_history", "*", "id, _fivetran_start") == [
        (1, "a", T[1], T[2] - MS, False, S[1]), (1, "a2", T[2], T[5] - MS, False, S[2]),
        (1, "a3", T[5], TMAX, True, S[5]),
        (2, "b", T[1], T[3], False, S[1]), (2, "b2", T[5], TMAX, True, S[5]),
        (3, "c", T[1], T[5], False, S[1]),
    ]
