"""Shared pytest fixtures: dbt runs in this process against one embedded
SparkSession (started by the first dbt command), each test in a project of its
own that installs historize as a local package, in a schema emptied before it
(one for every test: EMBEDDED_SCHEMA; on the cluster, one of its own). The
cluster tests run dbt's `thrift` target against a Spark cluster instead, and
never start the embedded Spark: ./scripts/test.sh runs them in a second
process (pytest-xdist), beside the embedded Spark's."""
from __future__ import annotations

import contextlib
import datetime as dt
import io
import itertools
import os
import pprint
import random
import re
import shutil
import subprocess
import tarfile
import textwrap
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import pytest

from historize_tools import cluster, demo
from historize_tools import dbt_runner as dbt
from reference import sorted_rows

_counter = itertools.count()

# The property tests: many random load sequences per run, each as its own group of keys
# in one table, so that one dbt run per load checks them all. Fixed seed by default, so CI
# is reproducible; HISTORIZE_PROPERTY_SEED picks others, HISTORIZE_PROPERTY_SEQUENCES more.
PROPERTY_SEQUENCES = int(os.environ.get("HISTORIZE_PROPERTY_SEQUENCES", "200"))
PROPERTY_SEED = int(os.environ.get("HISTORIZE_PROPERTY_SEED", "0"))
GROUP = 10  # keys of sequence g are g * GROUP + k, 0 < k < GROUP
SHRINK_ROUNDS = 8


def grouped_key(group: int, key: int) -> int:
    assert 0 < key < GROUP, key
    return group * GROUP + key


def group_of(key: int) -> int:
    return key // GROUP


def padded(sequences: Sequence[list], empty: Callable[[list], Any]) -> list[list]:
    """Every sequence as long as the longest: a shorter one continues with `empty` loads
    (a load that changes nothing, e.g. its last snapshot again)."""
    length = max(len(s) for s in sequences)
    return [list(s) + [empty(s)] * (length - len(s)) for s in sequences]


def random_snapshots(rng: random.Random, values: Callable[[int], Any]) -> list[dict]:
    """1 to 4 snapshots {key: values} of keys 1 to 4: a key is absent from a fifth of them (so
    keys leave and return) and keeps its values in about half of the others; `values(number)`
    draws new values for load `number`."""
    snapshots: list[dict] = []
    for number in range(rng.randint(1, 4)):
        snapshot = {}
        for key in range(1, 5):
            if rng.random() < 0.2:
                continue
            before = snapshots[-1].get(key) if snapshots else None
            snapshot[key] = before if before and rng.random() < 0.5 else values(number)
        snapshots.append(snapshot)
    return snapshots


def fewer_loads_and_keys(sequence: list[dict]) -> Iterator[list[dict]]:
    """One-step smaller variants of a sequence of snapshots {key: values}: a load fewer,
    then a key fewer in every load."""
    for number in range(len(sequence)):
        yield sequence[:number] + sequence[number + 1:]
    for key in {k for snapshot in sequence for k in snapshot}:
        yield [{k: v for k, v in snapshot.items() if k != key} for snapshot in sequence]


def differing_groups(actual: Iterable[Sequence[Any]], expected: Iterable[Sequence[Any]]) -> set[int]:
    """The groups whose rows differ; each row's first value is its grouped key."""
    by_group: dict[int, list] = {}
    for side, rows in enumerate((actual, expected)):
        for row in rows:
            by_group.setdefault(group_of(row[0]), [[], []])[side].append(row)
    return {g for g, (mine, model) in by_group.items() if sorted_rows(mine) != sorted_rows(model)}


def check_sequences(generate: Callable[[random.Random], list], examples: Sequence[list],
                    run: Callable[[list[list]], set[int]], reductions: Callable[[list], Iterable[list]]) -> None:
    """Runs the examples and PROPERTY_SEQUENCES generated sequences as one batch:
    `run(sequences)` loads sequence g as group g and returns the groups whose table
    differs from the model of the rules. A failure is shrunk, each round running every
    one-step reduction of the smallest failing sequence as one batch, and reported as a
    literal to add to the test's EXAMPLES."""
    rng = random.Random(PROPERTY_SEED)
    sequences = list(examples) + [generate(rng) for _ in range(PROPERTY_SEQUENCES)]
    failing = run(sequences)
    if not failing:
        return
    smallest = min((sequences[g] for g in failing), key=lambda s: len(repr(s)))
    for _ in range(SHRINK_ROUNDS):
        candidates = [c for c in reductions(smallest) if c]
        found = run(candidates) if candidates else set()
        if not found:
            break
        smallest = min((candidates[g] for g in found), key=lambda s: len(repr(s)))
    raise AssertionError(
        f"{len(failing)} of {len(sequences)} sequences (seed {PROPERTY_SEED}) differ from the model; "
        f"the smallest, shrunk, to add to EXAMPLES:\n{pprint.pformat(smallest)}")


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
        return dbt.run(list(args), project_dir=self.path, variables=variables, expect_success=expect_success,
                       callbacks=callbacks, reuse_manifest=True)

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


# A load killed after each of its statements (tests/functional/test_kill_and_rerun.py and the
# events loads' test): a probe of the tables after every statement, and the tables it reads.

class StatementProbe:
    """A dbt callback on `node`'s statements: after each one completes it reads
    `probe()` (the tables and their versions); with `kill`, it fails the run
    right after the first statement that changed them, unless that statement
    is `repeat` (the one the previous run was killed after, made again)."""

    def __init__(self, node: str, probe, kill: bool = False, repeat: str | None = None) -> None:
        self.node, self.probe, self.kill, self.repeat = node, probe, kill, repeat
        self.probes: list = []
        self.sql = self.killed_after = None

    def __call__(self, event) -> None:
        if event.info.name not in ("SQLQuery", "SQLQueryStatus") or not event.data.node_info.unique_id.endswith(
                "." + self.node):
            return
        if event.info.name == "SQLQuery":
            self.sql = " ".join(event.data.sql.split())
        if event.info.name != "SQLQueryStatus":
            return
        if not self.probes:
            self.probes.append(self.start)
        self.probes.append(self.probe())
        if self.kill and self.probes[-1] != self.probes[-2] and self.sql != self.repeat:
            self.killed_after = self.sql
            raise RuntimeError(f"injected failure after statement {len(self.probes) - 1}")

    def started(self) -> "StatementProbe":
        self.start = self.probe()
        return self

    def writes(self) -> list[int]:
        """The statements (1-based) after which the tables or their versions had changed."""
        return [number for number in range(1, len(self.probes)) if self.probes[number] != self.probes[number - 1]]


def kill_after_each_write(node: str, probe, writing: list[int], run: Callable, check: Callable) -> list[int]:
    """Kills a load right after its first write, its rerun right after its own first write (a
    write the run before was killed after, made again, is passed over), and so on, until a
    rerun completes, which must write nothing. `run(callbacks)` runs the load, expecting it may
    fail; `check(kills)` runs after each kill. Returns the statements killed after, a run each."""
    kills, repeat = [], None
    for _ in range(2 * len(writing) + 1):
        killer = StatementProbe(node, probe, kill=True, repeat=repeat).started()
        result = run([killer])
        if result.success:
            assert killer.writes() == []  # the load is complete: its rerun writes nothing
            return kills
        kills.append(len(killer.probes) - 1)
        repeat = killer.killed_after
        assert f"injected failure after statement {kills[-1]}" in dbt.failure_messages(result)
        check(kills)
    raise AssertionError(f"the load never completed: killed after statements {kills}")


def tables_and_versions(schema_dir: Path) -> tuple:
    """The schema's tables (not session views, which have no folder) and the Delta
    version of each: its newest commit file. Read from the warehouse's folders
    rather than the catalog: it runs after every statement of every load, from
    dbt's threads (a callback), and a folder listing costs a millisecond where a
    query costs a hundred."""
    found = []
    for table in sorted(path for path in schema_dir.iterdir() if path.name != "snapshot"):
        commits = [int(name.stem) for name in (table / "_delta_log").glob("*.json") if name.stem.isdigit()]
        if commits:
            found.append((table.name, max(commits)))
    return tuple(found)


def schema_folder(project) -> Path:
    """The schema's folder in the warehouse (the tests' in-memory catalog keeps each
    managed table in a folder named after it, moved by a rename)."""
    warehouse = dbt.spark().conf.get("spark.sql.warehouse.dir")
    return Path(warehouse.removeprefix("file:")) / f"{project.schema}.db"


# The folders and the scope each belongs to: under pytest-xdist a scope goes to one worker
# as a whole. The embedded Spark's tests (tests/functional) take the longest, in one worker;
# the quickstart's test (tests/user) runs its Spark in a process of its own, and the unit tests
# run none, so they go with the cluster's tests, whose worker mostly waits.
SPARK_SCOPES = {"functional": "functional", "cluster": "cluster", "user": "cluster", "unit": "cluster"}


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """pytest-xdist's scheduling by scope, as SPARK_SCOPES maps folders to scopes: the
    embedded Spark's tests (tests/functional) share one SparkSession in one worker, and
    the cluster's (tests/cluster, with tests/user and tests/unit) run beside them in
    another; any other test goes anywhere."""
    from xdist.scheduler import LoadScopeScheduling

    class BySparkFolder(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            folder = Path(nodeid.split("::")[0]).parent.name
            return SPARK_SCOPES.get(folder, nodeid)

    return BySparkFolder(config, log)


@pytest.fixture(scope="session")
def spark_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("spark")
    dbt.environment(spark_dir=path)
    dbt.run(["debug", "--quiet"])  # starts the one SparkSession every test shares
    return path


def _new_project(request: pytest.FixtureRequest, tmp_path: Path) -> Project:
    """A project of the test's own, in a schema named after the test."""
    name = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:40].strip("_")
    return Project(dbt.package_project(tmp_path / "project", PROJECT_YML), f"t{next(_counter)}_{name}")


# The embedded Spark's tests share one schema, each test's tables dropped after it, and each
# test's project starts from the parse of the one before (partial_parse.msgpack): dbt then
# parses only the files that differ. The schema is part of dbt's profile, and a profile that
# changed makes dbt parse everything again (the package's macros: about a second a test).
EMBEDDED_SCHEMA = "t_embedded"
_previous_project: list[Path] = []  # the folder of the test's project before, once there was one


# The last release that stored version keys and row hashes as SHA-256 hex text: the tables
# its users hold, which their next load rewrites compact (tests/functional/test_upgrade.py).
HEX_KEYS_RELEASE = "109d8d1c361a10390c82e6c465d7fc357da2c4fc"


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


@pytest.fixture
def project(request: pytest.FixtureRequest, tmp_path: Path, spark_dir: Path) -> Iterator[Project]:
    proj = Project(dbt.package_project(tmp_path / "project", PROJECT_YML), EMBEDDED_SCHEMA)
    if _previous_project:
        parsed = _previous_project[0] / "target" / "partial_parse.msgpack"
        if parsed.is_file():
            (proj.path / "target").mkdir(exist_ok=True)
            shutil.copy(parsed, proj.path / "target")
    _previous_project[:] = [proj.path]
    dbt.spark().sql(f"drop schema if exists {proj.schema} cascade")
    shutil.rmtree(schema_folder(proj), ignore_errors=True)  # nothing left of the test before
    dbt.spark().sql(f"create schema {proj.schema}")
    yield proj
    if _session_started():
        dbt.spark().sql(f"drop schema if exists {proj.schema} cascade")


def _session_started() -> bool:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() is not None


# The cluster tests: dbt's `thrift` target against a real Spark cluster on this machine
# (./scripts/cluster.sh). Started once per test run unless up already; stopped at the end
# only if the tests started it.
@pytest.fixture(scope="session")
def running_cluster() -> Iterator[cluster.Settings]:
    dbt.environment()
    dbt.small_tables()  # a cluster the tests start has their settings (a running one keeps its own)
    settings = cluster.Settings.from_environment()
    started = not cluster.status(settings)[0]
    if started:
        try:
            cluster.start(settings)
        except cluster.ClusterError as error:
            pytest.fail(f"the cluster did not start: {error}")
    yield settings
    if started:
        cluster.stop(settings)


@pytest.fixture
def cluster_project(request: pytest.FixtureRequest, tmp_path: Path, running_cluster: cluster.Settings
                    ) -> Iterator[Project]:
    """A test's own project and schema, on the cluster: inside `on_cluster` throughout."""
    proj = _new_project(request, tmp_path)
    with on_cluster(running_cluster, proj.schema):
        demo.query(f"create schema if not exists {proj.schema}")
        yield proj
        demo.query(f"drop schema if exists {proj.schema} cascade")


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
