"""Shared pytest fixtures: dbt runs in this process against one embedded
SparkSession (started by the first dbt command), each test in a project of its
own that installs historize as a local package, in a schema of its own."""
from __future__ import annotations

import datetime as dt
import itertools
import os
import re
import socket
import textwrap
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import pytest
from hypothesis import HealthCheck, settings

from historize_tools import dbt_runner as dbt

_counter = itertools.count()

# The property tests: a few examples in CI (each is several dbt runs), more on demand
# with HYPOTHESIS_EXAMPLES=50.
# Derandomized by default, so CI is reproducible; HYPOTHESIS_RANDOM=1 explores.
property_settings = settings(
    max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "3")),
    derandomize=os.environ.get("HYPOTHESIS_RANDOM") != "1",
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

PROJECT_YML = dbt.project_yml("test_project")

# Load times and the Type 6 program dimension, shared by the Type 6 and the concurrency tests.
T1, T2, T3, T4 = (dt.datetime(2026, 1, d, 6) for d in (1, 2, 3, 4))
SENTINEL = dt.datetime(9999, 12, 31, 23, 59, 59)
D = {n: dt.date(2020, 1, n) for n in range(1, 10)}
PROGRAM_SOURCE = "program_id string, created_on date, current_program_name string, eligibility_threshold int, funding_cap int"
PROGRAM_CONFIG = ("materialized='scd_type6', unique_key='program_id', type0_columns=['created_on'], "
                  "type1_columns=['current_program_name'], "
                  "type3_columns={'eligibility_threshold': 'previous_eligibility_threshold'}, audit=true")
DIM = ("program_id, created_on, current_program_name, eligibility_threshold, funding_cap, previous_eligibility_threshold, "
       "effective_from, effective_to, current_flag, version, change_reason")
AUDIT = "program_id, change_type, changed_columns, change_ts, reason, source_batch_id"


class Project:
    """A throwaway dbt project using historize as a package, in its own schema."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path = path
        self.schema = schema

    def write(self, relative: str, text: str) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip())
        return target

    def model(self, name: str, sql: str) -> Path:
        return self.write(f"models/{name}.sql", sql)

    def run(self, *args: str, variables: Mapping[str, Any] | None = None, expect_success: bool = True,
            callbacks=()):
        os.environ["HISTORIZE_SCHEMA"] = self.schema
        return dbt.run(list(args), project_dir=self.path, variables=variables, expect_success=expect_success,
                       callbacks=callbacks)

    def fail(self, *args: str, variables: Mapping[str, Any] | None = None) -> str:
        """Run a dbt command that must fail; return its error text."""
        result = self.run(*args, variables=variables, expect_success=False)
        assert not result.success, f"dbt {' '.join(args)} succeeded; it should have failed"
        return dbt.failure_messages(result)

    def sql(self, query: str) -> list[tuple]:
        return [tuple(row) for row in dbt.spark().sql(query).collect()]

    def columns(self, name: str) -> list[tuple]:
        """The table's (name, type, comment), in order: `describe` up to its partition section."""
        found = []
        for row in self.sql(f"describe table {self.schema}.{name}"):
            if not row[0] or row[0].startswith("#"):
                break
            found.append(tuple(row[:3]))
        return found

    def spark_row(self, query: str):
        """The first row of `query`, as Spark gives it (nested values kept)."""
        return dbt.spark().sql(query).collect()[0]

    def table(self, name: str, columns: str = "*", order_by: str | None = None) -> list[tuple]:
        order = f" order by {order_by}" if order_by else ""
        return self.sql(f"select {columns} from {self.schema}.{name}{order}")

    def create_table(self, name: str, schema_ddl: str, rows: Sequence[Sequence[Any]]) -> None:
        """(Re)create `name` as a Delta table with the given DDL schema and rows."""
        session = dbt.spark()
        frame = session.createDataFrame(list(rows), schema=schema_ddl)
        frame.write.format("delta").mode("overwrite").option("overwriteSchema", "true").saveAsTable(
            f"{self.schema}.{name}"
        )

    def history(self, name: str) -> list[dict]:
        return [row.asDict() for row in dbt.spark().sql(f"describe history {self.schema}.{name}").collect()]

    def commits(self, name: str) -> int:
        return len(self.history(name))


@pytest.fixture(scope="session")
def spark_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("spark")
    dbt.environment(spark_dir=path)
    dbt.run(["debug", "--quiet"])  # starts the one SparkSession every test shares
    return path


@pytest.fixture
def project(request: pytest.FixtureRequest, tmp_path: Path, spark_dir: Path) -> Iterator[Project]:
    name = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:40].strip("_")
    schema = f"t{next(_counter)}_{name}"
    proj = Project(dbt.package_project(tmp_path / "project", PROJECT_YML), schema)
    dbt.spark().sql(f"create schema if not exists {schema}")
    yield proj
    if _session_started():
        dbt.spark().sql(f"drop schema if exists {schema} cascade")


def _session_started() -> bool:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() is not None


@pytest.fixture(scope="session")
def thrift_port(spark_dir: Path) -> int:
    """A Spark Thrift Server (HiveThriftServer2) on the tests' SparkSession: dbt's
    `thrift` target, as on a cluster, sees the same catalog and tables."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = dbt.spark()
    session.conf.set("hive.server2.thrift.port", str(port))
    session.conf.set("hive.server2.thrift.bind.host", "127.0.0.1")
    server = session._jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2
    server.startWithContext(session._jsparkSession.sqlContext())
    return port
