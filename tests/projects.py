"""A test's dbt project and its tables: a throwaway project using historize as a package,
the values a test expects, compared as Spark casts them to text, how each adapter names a
relation in the SQL it compiles, what a load reports, a project on an earlier release of
the package, and dbt's `thrift` target on the cluster."""
from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import subprocess
import tarfile
import textwrap
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from historize_tools import cluster, demo
from historize_tools import dbt_runner as dbt

from reference import sorted_rows

PROJECT_YML = dbt.project_yml("test_project")
# The demo's tables after its four loads, as ./scripts/demo.sh prints them, on any target.
DEMO_TABLES = Path(__file__).resolve().parent / "demo_tables.txt"

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
        # no manifest.json or run_results.json: a test reads dbt's results from the run itself
        return dbt.run([*args, "--no-write-json"], project_dir=self.path, variables=variables,
                       expect_success=expect_success, callbacks=callbacks, reuse_manifest=True)

    def fail(self, *args: str, variables: Mapping[str, Any] | None = None) -> str:
        """Run a dbt command that must fail; return its error text."""
        result = self.run(*args, variables=variables, expect_success=False)
        assert not result.success, f"dbt {' '.join(args)} succeeded; it should have failed"
        return dbt.failure_messages(result)

    def failures(self, *args: str, variables: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Run a dbt command that must fail; return each failed node's error text by its name."""
        result = self.run(*args, variables=variables, expect_success=False)
        assert not result.success, f"dbt {' '.join(args)} succeeded; it should have failed"
        return {node_result.node.name: str(node_result.message) for node_result in result.result.results
                if str(node_result.status) in {"error", "fail"}}

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

    def create_source(self, name: str, schema_ddl: str, rows: Sequence[Sequence[Any]]) -> None:
        """(Re)create `name` as a view of the given rows, typed by the DDL schema: a model's
        input, read by its select, needs no table of its own (a view is a catalog entry, a
        Delta table a commit of files, ten times the cost)."""
        fields = dbt.spark().createDataFrame([], schema=schema_ddl).schema.fields
        columns = ", ".join(f"cast(col{number} as {field.dataType.simpleString()}) as {sql_identifier(field.name)}"
                            for number, field in enumerate(fields, start=1))
        # no rows: one row of NULLs, filtered out (VALUES needs a row)
        values = ", ".join("(" + ", ".join(sql_literal(value) for value in row) + ")"
                           for row in rows or [(None,) * len(fields)])
        self.sql(f"create or replace view {self.schema}.{sql_identifier(name)} as "
                 f"select {columns} from values {values}{'' if rows else ' where false'}")

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

    @contextlib.contextmanager
    def unchanged(self, *names: str) -> Iterator[None]:
        """The block leaves each table at its Delta version, with the same rows."""
        before = {name: (self.commits(name), sorted_rows(self.table(name))) for name in names}
        yield
        assert {name: (self.commits(name), sorted_rows(self.table(name))) for name in names} == before


# A test's tables on either target and the values it expects, compared as Spark's SQL casts them to text.

def spark_text(value):
    """A value as Spark casts it to a string (how the tables are compared)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    if isinstance(value, list):
        return "[" + ", ".join(spark_text(item) for item in value) + "]"
    return str(value)


def as_text(rows: list[tuple]) -> list[tuple]:
    return [tuple(spark_text(value) for value in row) for row in rows]


class TargetTables:
    """The project's tables, by SQL on the current target: the cluster inside `on_cluster`,
    else the embedded Spark; values compared as text (`as_text`)."""

    def __init__(self, schema: str) -> None:
        self.schema = schema

    def create(self, name: str, ddl: str, rows: list[tuple]) -> None:
        demo.query(f"create or replace table {self.schema}.{name} ({ddl}) using delta")
        values = ", ".join("(" + ", ".join(sql_literal(value) for value in row) + ")" for row in rows)
        demo.query(f"insert into {self.schema}.{name} values {values}")

    def rows(self, name: str, columns: str, order: str) -> list[tuple]:
        shown = ", ".join(f"cast({column.strip()} as string)" for column in columns.split(","))
        return [tuple(row) for row in demo.query(f"select {shown} from {self.schema}.{name} order by {order}")[1]]

    def commits(self, name: str) -> int:
        return len(demo.query(f"describe history {self.schema}.{name}")[1])

    def versions(self, name: str) -> tuple[int, ...]:
        """How many commits a model's table (and its audit table) has."""
        audit = (self.commits(f"{name}_audit"),) if name.startswith("dim_") else ()
        return (self.commits(name), *audit)

    def audit(self, name: str) -> list[tuple]:
        return self.rows(f"{name}_audit", AUDIT, "change_ts, program_id")


class RelationNames:
    """How the adapter of HISTORIZE_TARGET renders the relations of `schema` in the SQL it
    compiles: dbt-spark writes a table as `schema.name` and a session view as `name`;
    dbt-databricks (its lane) quotes every part and puts the catalog first (Unity
    Catalog's three-part names), so a view is one quoted part."""

    def __init__(self, schema: str, target: str | None = None) -> None:
        self.schema = schema
        self.databricks = (target or os.environ.get("HISTORIZE_TARGET", "local")) == "databricks"

    def table(self, name: str) -> str:
        return f"`main`.`{self.schema}`.`{name}`" if self.databricks else f"{self.schema}.{name}"

    def view(self, name: str) -> str:
        return f"`{name}`" if self.databricks else name


def sql_literal(value: Any) -> str:
    """A Spark SQL literal of a Python value, escaped here (independently of the project's macros)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"cast('{value!r}' as double)"
    if isinstance(value, dt.datetime):
        return f"timestamp'{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"date'{value.isoformat()}'"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"  # str, Decimal


def sql_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def load_reports(result) -> dict[str, dict]:
    """What each model's load did, as dbt reports it: its `adapter_response`."""
    return {node_result.node.name: node_result.adapter_response for node_result in result.result.results}


def report(new: int, changed: int, deleted: int, detail: str, written: int | None = None) -> dict:
    """The `adapter_response` of a load with these counts; `written` defaults to their sum."""
    written = new + changed + deleted if written is None else written
    return {"_message": f"{new} new, {changed} changed, {deleted} deleted ({detail})",
            "code": "written" if written else "nothing to write", "rows_affected": written}


# The last release that stored version keys and row hashes as SHA-256 hex text: the tables
# its users hold, which their next load rewrites compact (tests/functional/test_upgrade.py).
HEX_KEYS_RELEASE = "109d8d1c361a10390c82e6c465d7fc357da2c4fc"
# The last release whose fivetran_history tables are not partitioned by _fivetran_active.
UNPARTITIONED_FIVETRAN_RELEASE = "2adcafe80f63ac65440476987e0ab81163fea0ab"


def release_project(path: Path, schema: str, commit: str = HEX_KEYS_RELEASE) -> Project:
    """A project at `path`, in `schema`, whose historize package is this repository's
    macros and dbt_project.yml at `commit` (from git: a clone has every release)."""
    package = path / "historize"
    package.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(dbt.ROOT), "archive", commit, "dbt_project.yml", "macros"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(package, filter="data")
    project_dir = dbt.package_project(path / "project", PROJECT_YML)
    (project_dir / "dbt_packages" / "historize").unlink()
    (project_dir / "dbt_packages" / "historize").symlink_to(package)
    (project_dir / "packages.yml").write_text(f"packages:\n  - local: {package}\n")
    return Project(project_dir, schema)


@contextlib.contextmanager
def on_cluster(settings: cluster.Settings, schema: str, port: int | None = None) -> Iterator[None]:
    """dbt's `thrift` target (and the demo's queries) on the cluster, in `schema`, while
    inside; dbt writes its target and logs under the cluster's folder, so that a run of
    this project on the cluster never meets one on the embedded Spark."""
    wanted = {"HISTORIZE_TARGET": "thrift", "HISTORIZE_SCHEMA": schema, "HISTORIZE_THRIFT_HOST": cluster.HOST,
              "HISTORIZE_THRIFT_PORT": str(port or settings.thrift_port),
              "DBT_TARGET_PATH": str(settings.home / "dbt" / "target"), "DBT_LOG_PATH": str(settings.home / "dbt" / "logs")}
    before = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
