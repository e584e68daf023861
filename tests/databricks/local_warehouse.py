"""A Databricks connection answered by a SparkSession on this machine, recording every
statement dbt-databricks sends: no workspace is reachable here, and the statements a load
sends are what a SQL warehouse must accept.

dbt-databricks opens its connection with `databricks.sql.connect` (through
`DatabricksHandle.from_connection_args`) after probing the host; `LocalWarehouse.install`
answers both instead. Its cursor runs each statement on the local SparkSession with the
profile's catalog, `hive_metastore` (with it dbt-databricks lists a schema's relations with the
connector's `tables()` call and reads columns with `describe table`, as on a workspace's Hive
metastore), named as Spark names its own, `spark_catalog`."""
from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

CATALOG = "hive_metastore"
_CATALOG_NAME = re.compile(r"`?\bhive_metastore\b`?", flags=re.I)
_QUERY_COMMENT = re.compile(r"^\s*/\*(?P<comment>.*?)\*/\s*", flags=re.S)


def local_spark(folder: Path, jars: Sequence[Path]):
    """A SparkSession with Delta, its warehouse in `folder`, set for tables of a few rows as
    the main stack's tests set theirs (profiles/profiles.yml with dbt_runner.small_tables())."""
    from pyspark.sql import SparkSession

    settings = {
        "spark.driver.extraClassPath": ":".join(str(jar) for jar in jars),
        "spark.driver.memory": "4g",
        "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.sql.warehouse.dir": str(folder / "warehouse"),
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "1",
        "spark.default.parallelism": "2",
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
        "spark.hadoop.fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.RawLocalFs",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }
    builder = SparkSession.builder.master("local[2]").appName("historize-databricks-lane")
    for name, value in settings.items():
        builder = builder.config(name, value)
    return builder.getOrCreate()


@dataclass(frozen=True)
class Sent:
    """A statement as dbt sent it: the node it ran for (from dbt's query comment; '' for
    dbt's own lookups outside a node), its text without the comment, whitespace collapsed."""
    node: str
    text: str

    @classmethod
    def of(cls, sql: str) -> "Sent":
        found = _QUERY_COMMENT.match(sql)
        node = ""
        if found:
            try:
                node = json.loads(found.group("comment")).get("node_id") or ""
            except ValueError:
                node = ""
        return cls(node.rsplit(".", 1)[-1], " ".join(_QUERY_COMMENT.sub("", sql).split()))


@dataclass
class LocalWarehouse:
    """The statements sent, in order, and the session that runs them."""

    spark: Any
    statements: list[Sent] = field(default_factory=list)

    def connect(self, **_arguments: Any) -> "_Connection":
        return _Connection(self)

    def install(self, monkeypatch) -> "LocalWarehouse":
        """Answer dbt-databricks's connections with this warehouse, and its host probe with nothing."""
        from dbt.adapters.databricks import connections, handle

        monkeypatch.setattr(connections, "check_spog_preconditions", lambda **_arguments: None)
        monkeypatch.setattr(handle.dbsql, "connect", self.connect)
        return self

    def run(self, sql: str, parameters: Sequence[Any] | None = None) -> tuple[list[tuple], list[tuple] | None]:
        """Record `sql`, run it (with its `?` parameters, as a seed's inserts bind them);
        its rows and its columns as a cursor describes them."""
        self.statements.append(Sent.of(sql))
        frame = self.spark.sql(_CATALOG_NAME.sub("spark_catalog", sql), args=list(parameters) if parameters else None)
        rows = [tuple(row) for row in frame.collect()]
        return rows, [(name, "string", None, None, None, None, None) for name in frame.columns] or None


class _Connection:
    def __init__(self, warehouse: LocalWarehouse) -> None:
        self.warehouse = warehouse
        self.session = uuid.uuid4().hex

    def cursor(self) -> "_Cursor":
        return _Cursor(self)

    def get_session_id_hex(self) -> str:
        return self.session

    def close(self) -> None:
        pass


class _Cursor:
    """The part of databricks-sql-connector's cursor that dbt-databricks uses."""

    def __init__(self, connection: _Connection) -> None:
        self.connection = connection
        self.query_id = uuid.uuid4().hex
        self.description: list[tuple] | None = None
        self._rows: list[tuple] = []

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> "_Cursor":
        self._rows, self.description = self.connection.warehouse.run(sql, parameters)
        return self

    def tables(self, catalog_name: str | None = None, schema_name: str | None = None, **_filters: Any) -> "_Cursor":
        """The connector's metadata call listing a schema's tables (not a statement): each
        table's or view's name and type, temporary views left out."""
        warehouse = self.connection.warehouse
        warehouse.statements.append(Sent("", f"(list the tables of {catalog_name}.{schema_name})"))
        listed = warehouse.spark.catalog.listTables(schema_name)
        self._rows = [(catalog_name, schema_name, table.name, "VIEW" if table.tableType == "VIEW" else "TABLE", "")
                      for table in listed if not table.isTemporary]
        self.description = [(name, "string", None, None, None, None, None)
                            for name in ("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS")]
        return self

    def fetchall(self) -> list[tuple]:
        rows, self._rows = self._rows, []
        return rows

    def fetchone(self) -> tuple | None:
        return self._rows.pop(0) if self._rows else None

    def fetchmany(self, size: int) -> list[tuple]:
        rows, self._rows = self._rows[:size], self._rows[size:]
        return rows

    def close(self) -> None:
        pass

    def cancel(self) -> None:
        pass
