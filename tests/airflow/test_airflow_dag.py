"""The Airflow example (examples/airflow, the `airflow` lane): the demo's DAG run with
Airflow's dag.test() for two logical dates, January and February, on the embedded
Spark, in this process (Airflow 3's metadata in SQLite). Every task succeeds, the
invariant tests among them; February's history load is killed after its first write
and retried by Airflow. The demo's tables then equal loading the same two months in
time order with dbt directly, in a schema of their own; the load ledger records the
retry, which found February applied, as a rerun."""
from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

from historize_tools import demo
from historize_tools import dbt_runner as dbt

from probes import StatementProbe

SCHEMA, IN_ORDER_SCHEMA = "tairflow", "tairflow_in_order"
HISTORY = "rc_aw_product_hist"
DATES = (dt.datetime(2026, 1, 1, 6, tzinfo=dt.timezone.utc), dt.datetime(2026, 2, 1, 6, tzinfo=dt.timezone.utc))


@pytest.fixture(scope="module")
def airflow_home(tmp_path_factory) -> Iterator[Path]:
    """Airflow's home and its SQLite metadata, made for this test; the DAG's module importable."""
    home = tmp_path_factory.mktemp("airflow")
    os.environ.update({"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                       "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
                       "AIRFLOW__CORE__DAGS_FOLDER": str(dbt.ROOT / "examples" / "airflow"),
                       # no usage metrics sent (this machine reaches no such service)
                       "AIRFLOW__COSMOS__ENABLE_TELEMETRY": "False", "DO_NOT_TRACK": "1"})
    sys.path.insert(0, str(dbt.ROOT / "examples" / "airflow"))
    from airflow.utils.db import resetdb

    resetdb()
    dbt.environment(spark_dir=home / "spark")
    dbt.run(["debug", "--quiet"])  # starts the SparkSession the DAG's tasks and this test share
    yield home
    active_spark().stop()


def drop_schemas(schema: str) -> None:
    for suffix in demo.DEMO_SCHEMA_SUFFIXES:
        demo.query(f"drop schema if exists {schema}_{suffix} cascade")


def active_spark():
    """dbt's SparkSession, made the active one of the calling thread (Airflow's tasks and
    dbt's models run in threads of their own, where PySpark knows no active session)."""
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


def history_version() -> int:
    return active_spark().sql(f"describe history {SCHEMA}_demo.{HISTORY} limit 1").collect()[0][0]


# Columns that hold the writing run's clock, not the load's.
RUN_CLOCK = {"loaded_at", "recorded_at"}


def demo_tables(schema: str) -> dict[str, list[tuple]]:
    """Every table the demo shows, from the demo schemas of `schema`: its rows as text, sorted,
    without the run's clock."""
    found = {}
    for table in demo.SHOWN:
        frame = active_spark().table(table.replace("historize_demo.", f"{schema}_demo."))
        rows = frame.select(*(column for column in frame.columns if column not in RUN_CLOCK)).collect()
        found[table] = sorted(tuple(str(value) for value in row) for row in rows)
    return found


class KillFirstAttempt:
    """dbt's runs in this process, as cosmos makes them: the first run of the history model
    in February is killed right after its first write (a StatementProbe), once."""

    def __init__(self) -> None:
        self.killer: StatementProbe | None = None

    def install(self, monkeypatch) -> None:
        from dbt.cli.main import dbtRunner

        invoke = dbtRunner.invoke
        probe = self

        def invoke_with_kill(runner, args, **kwargs):
            # cosmos passes the rendered vars as YAML: February's load is demo_load '2'
            if (probe.killer is None and args[0] == "run" and args[2].endswith(f".{HISTORY}")
                    and "demo_load: '2'" in " ".join(args)):
                probe.killer = StatementProbe(HISTORY, history_version, kill=True).started()
                runner.callbacks = [*runner.callbacks, probe.killer]
            return invoke(runner, args, **kwargs)

        monkeypatch.setattr(dbtRunner, "invoke", invoke_with_kill)


def test_the_demo_dag_loads_two_months_and_a_killed_task_retried_ends_correct(airflow_home, monkeypatch):
    from airflow.utils.state import DagRunState, TaskInstanceState

    os.environ["HISTORIZE_SCHEMA"] = SCHEMA
    for schema in (SCHEMA, IN_ORDER_SCHEMA):
        drop_schemas(schema)
    dbt.run(["parse"], variables=demo.DEMO_VARS)  # the manifest the DAG is rendered from
    from historize_airflow.demo_dag import historize_demo

    kill = KillFirstAttempt()
    kill.install(monkeypatch)
    runs = {}
    for date in DATES:
        run = historize_demo.test(logical_date=date)
        runs[date.month] = run
        assert run.state == DagRunState.SUCCESS, (date, [(ti.task_id, ti.state) for ti in run.get_task_instances()])
    tasks = {ti.task_id: ti for ti in runs[2].get_task_instances()}
    history_run = tasks[f"{HISTORY}.run"]
    assert kill.killer is not None and kill.killer.killed_after is not None
    assert history_run.state == TaskInstanceState.SUCCESS and history_run.try_number == 2
    assert {f"{HISTORY}.test"} <= set(tasks)
    airflow_tables = demo_tables(SCHEMA)

    os.environ["HISTORIZE_SCHEMA"] = IN_ORDER_SCHEMA
    for date, load in zip(DATES, demo.LOADS):
        demo.build({**load, "load_run_id": runs[date.month].run_id})
    in_order = demo_tables(IN_ORDER_SCHEMA)
    for schema in (SCHEMA, IN_ORDER_SCHEMA):
        drop_schemas(schema)
    ledger, ledger_in_order = (tables.pop("historize_demo.historize_loads") for tables in (airflow_tables, in_order))
    assert airflow_tables == in_order
    # January as loaded in order; February's load was written by the killed attempt, so the
    # retry, which records it, found it applied: nothing to write (as any rerun of a load)
    assert ledger[0] == ledger_in_order[0]
    assert ledger[1][:4] == ledger_in_order[1][:4] and ledger_in_order[1][4] == "written"
    assert ledger[1][4:] == ("nothing to write", "0", "0", "0")
