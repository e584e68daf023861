"""Shared pytest fixtures: dbt runs in this process against one embedded
SparkSession (started by the first dbt command), each test in a project of its
own that installs historize as a local package, in a schema emptied before it
(one for every test: EMBEDDED_SCHEMA; on the cluster, one of its own). The
cluster tests run dbt's `thrift` target against a Spark cluster instead, and
start no embedded Spark: ./scripts/test.sh runs them in a second process
(pytest-xdist), beside the embedded Spark's, and that process then runs a share of
the embedded Spark's tests in a Spark of its own (scheduling.py).

What the tests share beside the fixtures is in modules by concern: projects.py
(a test's project and tables), properties.py (the property tests' engine),
probes.py (a load killed after each statement), scheduling.py (which worker
runs which tests)."""
from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from historize_tools import cluster, demo
from historize_tools import dbt_runner as dbt

from probes import schema_folder
from projects import PROJECT_YML, Project, on_cluster

_counter = itertools.count()


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """The tests scheduled by Spark (scheduling.py)."""
    from scheduling import BySparkFolder

    return BySparkFolder(config, log)


@pytest.fixture(scope="session")
def spark_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("spark")
    dbt.environment(spark_dir=path)
    dbt.reuse_spark_session()
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
