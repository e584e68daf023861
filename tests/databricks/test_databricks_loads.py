"""Every kind's loads on dbt-databricks (the `databricks` lane, ./scripts/lanes.sh): the
statements the materializations send through dbt-databricks's own connection, answered by a
SparkSession on this machine (local_warehouse.py: no workspace is reachable here), end in
the tables tests/reference.py's models of the rules give, and each is of a kind a Databricks
SQL warehouse accepts: no `set` or `reset` of a Spark setting, no `cache table`.

The loads: scd_type6 with its audit, fivetran_history, and each path of scd2_hist (a first
load and a default one, strategy 'ordered', a late load, change events, adoption of a dbt
snapshot, a bitemporal table from snapshots with a late load)."""
from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from typing import Iterator

import pytest

from historize_tools import dbt_runner as dbt

from local_warehouse import CATALOG, LocalWarehouse, local_spark
from reference import (FivetranModel, Scd2Model, Type6Model, beliefs_from_snapshots, sorted_rows,
                       versions_from_events)

# What a load may send a SQL warehouse, by its first words: reads of the catalog and of
# tables, a query's plan, temporary views of the select, the table's DDL, its writes. A statement of any
# other kind fails the test, `set`, `reset` and `cache` among them (a SQL warehouse allows
# `set` of a short list of its own parameters only, and has no cache statements).
ACCEPTED = re.compile(
    r"^(\(list the tables of |show schemas in |show tblproperties |show tables in |show views in |"
    r"describe (table )?(extended )?|describe history |select |with |explain select |"
    r"create or replace temporary view |drop view if exists |create table |create or replace table |"
    r"create schema if not exists |alter table |merge into |insert into |insert overwrite |update |delete from |"
    r"drop table if exists )", flags=re.I)
REFUSED_BY_A_WAREHOUSE = re.compile(r"^(set|reset|cache|uncache|refresh|add jar)\b", flags=re.I)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalWarehouse]:
    """dbt-databricks's connections answered by a local SparkSession, on the profile's
    `databricks` target with the Hive metastore's catalog; every statement recorded."""
    folder = tmp_path_factory.mktemp("databricks_warehouse")
    dbt.small_tables()  # the newest Java Spark runs on
    spark = local_spark(folder, sorted((dbt.ROOT / ".jars").glob("*.jar")))
    patch = pytest.MonkeyPatch()
    patch.setenv("HISTORIZE_TARGET", "databricks")
    patch.setenv("HISTORIZE_DATABRICKS_CATALOG", CATALOG)
    patch.setenv("DBT_PROFILES_DIR", str(dbt.ROOT / "profiles"))
    patch.setenv("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    local = LocalWarehouse(spark).install(patch)
    yield local
    patch.undo()
    spark.stop()


def refused(statements) -> list[str]:
    """The statements a SQL warehouse would refuse, or that are of no kind ACCEPTED lists."""
    return [sent.text[:120] for sent in statements
            if REFUSED_BY_A_WAREHOUSE.match(sent.text) or not ACCEPTED.match(sent.text)]


T = {n: dt.datetime(2026, 1, n, 6) for n in (1, 2, 3)}
R = {n: dt.datetime(2026, 2, n, 12) for n in (1, 2, 3)}
SNAPSHOTS = {1: {(1,): {"name": "a"}, (2,): {"name": "b"}},
             2: {(1,): {"name": "a"}, (2,): {"name": "b2"}},  # loaded last, late
             3: {(1,): {"name": "a2"}, (3,): {"name": "c"}}}
SYNCED = dt.datetime(2026, 3, 1)
DIMENSION = {1: {"P1": ("c1", "n1", 10), "P2": ("c2", "n2", 20)},  # program: created_on (Type 0), name (Type 1),
             3: {"P1": ("c1b", "n1b", 11), "P3": ("c3", "n3", 30)}}  # threshold (Type 2, its previous as Type 3)
BATCHES = {1: [(1, "upsert", T[1], "x"), (2, "upsert", T[1], "y")],  # (id, op, _fivetran_start, a)
           3: [(1, "upsert", T[2], "x2"), (2, "delete", T[3], None), (3, "upsert", T[3], "z")]}
EVENTS = {  # (id, name, changed_at, op) by run
    1: [(1, "a", T[1], "U"), (1, "b", T[3], "U"), (2, "x", T[1], "U"), (2, "x", T[2], "D")],
    3: [(1, "c", T[2], "U"), (3, "m", T[3], "U"), (3, "n", T[1], "U")],  # late events, a new key out of order
}
PATHS = {  # options in meta, as dbt 1.12 wants a package's own config keys
    "ordered_hist": "materialized='scd2_hist', unique_key='id', meta={'strategy': 'ordered'}",
    "late_hist": "materialized='scd2_hist', unique_key='id', meta={'out_of_order': 'reconcile'}",
    "beliefs_hist": "materialized='scd2_hist', unique_key='id', meta={'bitemporal': true}",
    "events_hist": ("materialized='scd2_hist', unique_key='id', meta={'input': 'changes', 'sequence_by': 'changed_at', "
                    "'deleted_when': \"op = 'D'\"}"),
    "adopted_hist": "materialized='scd2_hist', unique_key='id', meta={'adopt_from': 'snap_adopted'}",
    "dim_program": ("materialized='scd_type6', unique_key='program_id', meta={'type0_columns': ['created_on'], "
                    "'type1_columns': ['name'], 'type3_columns': {'threshold': 'previous_threshold'}, 'audit': true}"),
    "orders_history": "materialized='fivetran_history', unique_key='id', meta={'op_column': 'op'}",
}
SOURCES = {"events_hist": "events", "dim_program": "programs", "orders_history": "orders"}
# The runs, in the order they run (the n-th recorded at R[n]): the snapshot's load_timestamp,
# and the models each loads.
RUNS = [(1, ("ordered_hist", "late_hist", "beliefs_hist", "events_hist", "dim_program", "orders_history")),
        (3, tuple(PATHS)),
        (2, ("late_hist", "beliefs_hist"))]
VERSION = "id, name, version_started_at, version_ended_at, version_state"


def source_table(spark, name: str, schema: str, rows: list[tuple]) -> None:
    spark.createDataFrame(rows, schema).write.format("delta").mode("overwrite").saveAsTable(f"analytics.{name}")


def table(spark, name: str, columns: str) -> list[tuple]:
    return sorted_rows(tuple(row) for row in spark.sql(f"select {columns} from analytics.{name}").collect())


def as_rows(versions, *extra) -> list[tuple]:
    """Scd2Model's versions as rows of VERSION, then the `extra` attributes of each."""
    return sorted_rows((v.key[0], v.attributes["name"], v.started_at, v.ended_at, v.state)
                       + tuple(getattr(v, name) for name in extra) for v in versions)


def test_every_kind_and_path_on_databricks_ends_in_its_history_sending_what_a_warehouse_accepts(warehouse, tmp_path):
    spark = warehouse.spark
    project = dbt.package_project(tmp_path / "project", dbt.project_yml("databricks_paths"))
    for name, config in PATHS.items():
        source = SOURCES.get(name, "snap")
        (project / "models" / f"{name}.sql").write_text(
            f"{{{{ config({config}) }}}}\nselect * from {{{{ target.schema }}}}.{source}\n")
    (project / "snapshots").mkdir(exist_ok=True)
    (project / "snapshots" / "snap_adopted.sql").write_text(
        "{% snapshot snap_adopted %}\n{{ config(unique_key='id', strategy='check', check_cols='all', "
        "file_format='delta') }}\nselect * from {{ target.schema }}.snap\n{% endsnapshot %}\n")
    os.environ["HISTORIZE_SCHEMA"] = "analytics"
    spark.sql("create schema if not exists analytics")
    # the dbt snapshot adopted: snapshot 1 taken at T1
    source_table(spark, "snap_adopted", "id int, name string, dbt_scd_id string, dbt_updated_at timestamp, "
                 "dbt_valid_from timestamp, dbt_valid_to timestamp",
                 [(1, "a", "1-1", T[1], T[1], None), (2, "b", "2-1", T[1], T[1], None)])
    first = len(warehouse.statements)
    for run, (load, models) in enumerate(RUNS, 1):
        source_table(spark, "snap", "id int, name string",
                     [(key[0], row["name"]) for key, row in SNAPSHOTS[load].items()])
        source_table(spark, "events", "id int, name string, changed_at timestamp, op string", EVENTS.get(load, []))
        source_table(spark, "programs", "program_id string, created_on string, name string, threshold int",
                     [(key, *values) for key, values in DIMENSION.get(load, {}).items()])
        source_table(spark, "orders", "id int, op string, _fivetran_start timestamp, a string, _fivetran_synced timestamp",
                     [(*event, SYNCED) for event in BATCHES.get(load, [])])
        dbt.run(["run", "--select", *models], project_dir=project,
                variables={"load_timestamp": f"{T[load]:%Y-%m-%d %H:%M:%S}", "load_run_id": f"r{load}",
                           "recorded_at": f"{R[run]:%Y-%m-%d %H:%M:%S}"})

    in_order, in_time_order = Scd2Model(), Scd2Model()
    for load in (1, 3):
        in_order.load(SNAPSHOTS[load], T[load], f"r{load}")
    for load in (1, 2, 3):
        in_time_order.load(SNAPSHOTS[load], T[load], f"r{load}")
    assert table(spark, "ordered_hist", VERSION + ", load_run_id") == as_rows(in_order.versions, "load_run_id")
    assert table(spark, "adopted_hist", VERSION) == as_rows(in_order.versions)
    assert table(spark, "late_hist", VERSION) == as_rows(in_time_order.versions)
    events = [((key,), at, 0, op == "D", {"name": name}) for load in (1, 3) for key, name, at, op in EVENTS[load]]
    assert table(spark, "events_hist", VERSION) == as_rows(versions_from_events(events))
    beliefs = beliefs_from_snapshots([(T[load], SNAPSHOTS[load]) for load, _ in RUNS], [R[run] for run in range(1, len(RUNS) + 1)])
    assert table(spark, "beliefs_hist", VERSION + ", recorded_at, superseded_at") == sorted_rows(
        (row.key[0], dict(row.attributes)["name"], row.started_at, row.ended_at, row.state, row.recorded_at,
         row.superseded_at) for row in beliefs)

    dimension, orders = Type6Model(), FivetranModel()
    for load in (1, 3):
        dimension.load(DIMENSION[load], T[load])
        orders.apply([((key,), op, start, {"a": a}, SYNCED) for key, op, start, a in BATCHES[load]])
    assert table(spark, "dim_program", "program_id, created_on, name, threshold, previous_threshold, "
                             "effective_from, effective_to, current_flag, version, change_reason") == dimension.table()
    assert table(spark, "dim_program_audit", "program_id, change_type, change_ts") == sorted_rows(
        [("P1", "INSERT", T[1]), ("P2", "INSERT", T[1]), ("P1", "UPDATE", T[3]), ("P2", "LOGICAL_DELETE", T[3]),
         ("P3", "INSERT", T[3])])
    assert table(spark, "orders_history", "id, a, _fivetran_start, _fivetran_end, _fivetran_active, "
                 "_fivetran_synced") == orders.rows()

    sent = warehouse.statements[first:]
    assert refused(sent) == []
    assert {statement.node for statement in sent} >= set(PATHS)  # each model's statements recorded as its own
