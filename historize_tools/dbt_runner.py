"""Drive dbt in this Python process, so every invocation shares one SparkSession.

A `dbt` command on the embedded Spark spends most of its time starting a JVM;
dbt-spark's `session` method reuses the process's SparkSession, so the demo,
the tests and the benchmark call dbt through `dbtRunner` instead.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from dbt.cli.main import dbtRunner, dbtRunnerResult

ROOT = Path(__file__).resolve().parent.parent


class DbtError(RuntimeError):
    """A dbt invocation that did not succeed; carries dbt's messages."""


def environment(spark_dir: Path | None = None) -> None:
    """Set what profiles/profiles.yml reads, before the first invocation."""
    os.environ.setdefault("HISTORIZE_HOME", str(ROOT))
    os.environ.setdefault("DBT_PROFILES_DIR", str(ROOT / "profiles"))
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    # dbt-spark sleeps this long between polls of a running Thrift statement; the
    # polls of this process wait for the statement themselves (_poll_thrift_statement)
    os.environ.setdefault("HISTORIZE_THRIFT_POLL_INTERVAL", "0")
    if spark_dir is not None:
        os.environ["HISTORIZE_SPARK_DIR"] = str(spark_dir)
        # a throwaway warehouse: the in-memory catalog, no Hadoop checksum files, two models
        # at a time, small tables (each read and each replay of a Delta log in one task: every
        # task deserializes its job's plan, which a second task on a few rows does not repay)
        os.environ.setdefault("HISTORIZE_CATALOG", "in-memory")
        os.environ.setdefault("HISTORIZE_FILE_CHECKSUMS", "false")
        os.environ.setdefault("HISTORIZE_THREADS", "2")
        os.environ.setdefault("HISTORIZE_PARALLELISM", "1")
        os.environ.setdefault("HISTORIZE_SNAPSHOT_PARTITIONS", "1")
        small_tables()


def small_tables() -> None:
    """Spark settings for tables of a few rows (the tests'), on the embedded Spark and on
    a cluster started after this: one shuffle partition, no adaptive execution and no
    code generation; more tasks, re-planning and generated code cost more than they
    save there. And the JVMs: the newest Java that Spark runs on, found on the machine
    (a newer JVM's just-in-time compiler spends less CPU on Spark's code, most of a
    statement's cost on tables of a few rows), with the throughput garbage collector
    (statements of a few rows leave short-lived garbage only, which the default
    collector's concurrent work handles with more CPU on two cores). Settings already
    made stay."""
    os.environ.setdefault("HISTORIZE_SHUFFLE_PARTITIONS", "1")
    os.environ.setdefault("HISTORIZE_CODEGEN", "false")
    os.environ.setdefault("HISTORIZE_ADAPTIVE", "false")
    os.environ.setdefault("HISTORIZE_JAVA_OPTIONS", "-XX:+UseParallelGC")
    java_home = newest_java_home()
    if java_home is not None:
        os.environ.setdefault("JAVA_HOME", str(java_home))


# The Java versions Spark 4.2 runs on, from the first release it supports of each.
SPARK_JAVA_VERSIONS = {17: (17,), 21: (21,), 25: (25, 0, 3)}
# Where JDKs are installed (Debian's packages and others put them there).
JDK_FOLDERS = (Path("/usr/lib/jvm"),)


def newest_java_home(folders: Sequence[Path] = JDK_FOLDERS) -> Path | None:
    """The JDK of the newest Java version Spark runs on among those in `folders`, as
    each JDK's `release` file names its version; None when there is none."""
    found = []
    for folder in folders:
        for release in folder.glob("*/release"):
            named = re.search(r'^JAVA_VERSION="([0-9]+(?:\.[0-9]+)*)"', release.read_text(errors="replace"), re.MULTILINE)
            if named is None or not (release.parent / "bin" / "java").is_file():
                continue
            version = tuple(int(part) for part in named.group(1).split("."))
            first_supported = SPARK_JAVA_VERSIONS.get(version[0])
            if first_supported is not None and version >= first_supported:
                found.append((version, release.parent))
    return max(found)[1] if found else None


def project_yml(name: str) -> str:
    """dbt_project.yml of a project using historize as a package (which adds none of
    its demo), with its seed loader (real NULLs on the embedded Spark) dispatched to."""
    return f"""\
name: {name}
version: "1.0"
config-version: 2
profile: historize
model-paths: ["models"]
macro-paths: ["macros"]
seed-paths: ["seeds"]
test-paths: ["tests"]
target-path: "target"
dispatch:
  - macro_namespace: dbt
    search_order: ["{name}", "historize", "dbt"]
models:
  +file_format: delta
"""


def package_project(path: Path, project_yml: str) -> Path:
    """A dbt project at `path` that installs this repository as the package `historize`:
    declared in its packages.yml (dbt 1.12 checks dbt_packages against it) and linked
    where `dbt deps` would link it."""
    (path / "dbt_packages").mkdir(parents=True, exist_ok=True)
    (path / "dbt_packages" / "historize").symlink_to(ROOT)
    (path / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    (path / "models").mkdir(exist_ok=True)
    (path / "dbt_project.yml").write_text(project_yml)
    return path


# A poll of a running Thrift statement waits this long for it to end, checking this often.
THRIFT_POLL_WAIT_SECONDS = 1.0
THRIFT_POLL_STEP_SECONDS = 0.02
# How long a failed statement's error message may lag behind its failed state.
THRIFT_ERROR_MESSAGE_WAIT_SECONDS = 10.0


def _poll_thrift_statement(poll: Callable) -> Callable:
    """pyhive's `Cursor.poll`, made to answer once something is known.

    dbt-spark runs each Thrift statement asynchronously and sleeps `poll_interval`
    whole seconds between polls, so on average a statement costs half a second more
    than it takes; this poll instead waits for the statement itself, checking often,
    and returns when it ends (or after THRIFT_POLL_WAIT_SECONDS, for dbt's own loop).
    And a Spark Thrift Server marks a failed statement as failed a moment before it
    records the error: a poll in between gets no message, and dbt reports only
    "Query failed with status: ERROR_STATE". This poll waits for the message."""
    from pyhive.hive import ttypes

    running = {ttypes.TOperationState.INITIALIZED_STATE, ttypes.TOperationState.PENDING_STATE,
               ttypes.TOperationState.RUNNING_STATE}

    def poll_until_known(cursor, get_progress_update: bool = True):
        began = time.monotonic()
        response = poll(cursor, get_progress_update)
        while (response.operationState in running
               and time.monotonic() - began < THRIFT_POLL_WAIT_SECONDS) or (
                response.operationState == ttypes.TOperationState.ERROR_STATE and not response.errorMessage
                and time.monotonic() - began < THRIFT_ERROR_MESSAGE_WAIT_SECONDS):
            time.sleep(THRIFT_POLL_STEP_SECONDS)
            response = poll(cursor, get_progress_update)
        return response

    poll_until_known.historize_poll = True
    return poll_until_known


def refine_thrift_polls() -> None:
    """pyhive's polls, in this process, replaced by _poll_thrift_statement's (once): for
    every dbt run on the `thrift` target that this process makes."""
    from pyhive import hive

    if not getattr(hive.Cursor.poll, "historize_poll", False):
        hive.Cursor.poll = _poll_thrift_statement(hive.Cursor.poll)


def _execute_on_started_session(execute: Callable) -> Callable:
    """dbt-spark's session `Cursor.execute`, made to run a statement on the SparkSession
    the first statement started.

    dbt-spark builds the session again before every statement: it passes each of the
    profile's `server_side_parameters` to SparkSession's builder, which applies them to
    the running session, a call into the JVM each, under a lock the builder shares
    between dbt's threads. Once the session runs, those settings are already the
    session's (no statement historize sends changes them), so later statements go to it
    directly; a stopped session is built again as dbt-spark builds it."""
    from dbt_common.exceptions import DbtRuntimeError
    from pyspark.sql.utils import AnalysisException

    started: list = []  # the session, once a statement started it

    def execute_on_started_session(self, sql: str, *parameters: Any) -> None:
        session = started[0] if started else None
        if session is None or parameters or session._sc._jsc is None:
            execute(self, sql, *parameters)
            started[:] = [self._df.sparkSession]
            return
        try:
            self._df = session.sql(sql)
        except AnalysisException as exc:
            raise DbtRuntimeError(str(exc)) from exc

    execute_on_started_session.historize_session = True
    return execute_on_started_session


def reuse_spark_session() -> None:
    """dbt-spark's session cursors, in this process, replaced by
    _execute_on_started_session's (once): for every dbt run on the embedded Spark that
    this process makes. The tests call it; the demo and the benchmark keep dbt-spark's
    own cursor, as a user's dbt runs it."""
    from dbt.adapters.spark.session import Cursor

    if not getattr(Cursor.execute, "historize_session", False):
        Cursor.execute = _execute_on_started_session(Cursor.execute)


# Manifests parsed for reuse, by project: (what they were parsed from, the manifest).
_manifests: dict[Path, tuple[tuple, Any]] = {}
# What a parse depends on besides the project's files: the target and its schema.
_PARSE_ENVIRONMENT = ("HISTORIZE_TARGET", "HISTORIZE_SCHEMA")
_PROJECT_FOLDERS = ("models", "macros", "seeds", "snapshots", "tests", "analyses")


def _parse_inputs(project_dir: Path) -> tuple:
    """The project's own sources (not its packages or outputs) and the environment it is parsed in."""
    sources = [project_dir / "dbt_project.yml", *(path for folder in _PROJECT_FOLDERS
                                                   for path in (project_dir / folder).rglob("*") if path.is_file())]
    files = tuple(sorted((str(path.relative_to(project_dir)), hashlib.sha1(path.read_bytes()).hexdigest())
                         for path in sources))
    return files, tuple(os.environ.get(name) for name in _PARSE_ENVIRONMENT)


def _manifest(project_dir: Path, options: list[str]):
    """The project's manifest, parsed again only when its files or environment changed.
    dbt parses in full whenever `--vars` change; the models here read vars only when
    they run, so one parse serves runs with any vars."""
    inputs = _parse_inputs(project_dir)
    cached = _manifests.get(project_dir)
    if cached is None or cached[0] != inputs:
        parsed = dbtRunner().invoke(["parse", "--quiet", "--no-write-json", *options])
        if not parsed.success:
            return None  # the run itself parses, and reports the error
        cached = _manifests[project_dir] = (inputs, parsed.result)
    return cached[1]


def run(
    args: Sequence[str],
    project_dir: Path = ROOT,
    variables: Mapping[str, Any] | None = None,
    expect_success: bool = True,
    callbacks: Sequence[Callable] = (),
    reuse_manifest: bool = False,
) -> dbtRunnerResult:
    """Run one dbt command; raise DbtError with dbt's messages when it fails unexpectedly.
    `callbacks` receive every event dbt fires (its log, as structured messages). With
    `reuse_manifest`, the project is parsed once for all runs until its files change
    (only for projects whose parse does not depend on vars)."""
    options = ["--project-dir", str(project_dir), "--profiles-dir", os.environ["DBT_PROFILES_DIR"]]
    command = [*args, *options]
    if variables:
        command += ["--vars", json.dumps(dict(variables))]
    manifest = _manifest(project_dir, options) if reuse_manifest else None
    if os.environ.get("HISTORIZE_TARGET") == "thrift":
        refine_thrift_polls()
    result = dbtRunner(manifest=manifest, callbacks=list(callbacks)).invoke(command)
    if expect_success and not result.success:
        raise DbtError(f"dbt {' '.join(args)} failed: {failure_messages(result)}")
    return result


def failure_messages(result: dbtRunnerResult) -> str:
    """The error text of a dbt result: the exception, or each failed node's message."""
    if result.exception is not None:
        return str(result.exception)
    messages = []
    for node_result in getattr(result.result, "results", None) or []:
        if str(node_result.status) in {"error", "fail"}:
            node = getattr(node_result, "node", None)
            messages.append(f"{node.name}: {node_result.message}" if node else str(node_result.message))
    return "\n".join(messages)


def spark():
    """The SparkSession dbt created (call after a first dbt command that ran SQL)."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None:
        raise RuntimeError("no SparkSession yet: run a dbt command that executes SQL first")
    return session


class EventRecorder:
    """A dbt callback that keeps the SQL each node ran and every warning."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, str]] = []  # (node unique_id, sql)
        self.warnings: list[str] = []

    def __call__(self, event) -> None:
        name = event.info.name
        if name == "SQLQuery":
            self.statements.append((event.data.node_info.unique_id, event.data.sql))
        elif event.info.level == "warn" and event.info.code.startswith("D"):  # dbt's deprecation codes
            self.warnings.append(f"{name}: {event.info.msg}")
