"""The cluster command refuses a setting it cannot use, naming it and its value, before
starting anything."""
from __future__ import annotations

import os

import pytest

from historize_tools import cluster
from historize_tools import dbt_runner


@pytest.mark.parametrize("name, value, expected", [
    ("HISTORIZE_ADAPTIVE", "maybe", "cluster: HISTORIZE_ADAPTIVE is 'maybe'; expected true or false"),
    ("HISTORIZE_CODEGEN", "1", "cluster: HISTORIZE_CODEGEN is '1'; expected true or false"),
    ("HISTORIZE_THRIFT_PORT", "ten", "cluster: HISTORIZE_THRIFT_PORT is 'ten'; expected a number"),
    ("HISTORIZE_SHUFFLE_PARTITIONS", "0", "cluster: HISTORIZE_SHUFFLE_PARTITIONS is '0'; expected a number of at least 1"),
    ("HISTORIZE_CLUSTER_START_TIMEOUT", "3m", "cluster: HISTORIZE_CLUSTER_START_TIMEOUT is '3m'; expected a number"),
])
def test_a_bad_setting_is_named_and_nothing_starts(monkeypatch, tmp_path, capsys, name, value, expected):
    monkeypatch.setenv("HISTORIZE_CLUSTER_DIR", str(tmp_path / "cluster"))
    monkeypatch.setenv(name, value)
    assert cluster.main(["start"]) == 2
    assert capsys.readouterr().err.strip() == expected
    assert not (tmp_path / "cluster").exists()


def test_settings_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("HISTORIZE_ADAPTIVE", " False ")
    monkeypatch.delenv("HISTORIZE_CODEGEN", raising=False)
    monkeypatch.setenv("HISTORIZE_THRIFT_PORT", "10001")
    monkeypatch.setenv("HISTORIZE_WORKER_CORES", "3")
    monkeypatch.delenv("HISTORIZE_SHUFFLE_PARTITIONS", raising=False)
    settings = cluster.Settings.from_environment()
    assert (settings.adaptive, settings.codegen, settings.thrift_port) == ("false", "true", 10001)
    assert settings.shuffle_partitions == 6  # twice the worker's cores
    monkeypatch.setenv("HISTORIZE_SHUFFLE_PARTITIONS", "1")
    assert cluster.Settings.from_environment().shuffle_partitions == 1


def test_java_options_reach_every_jvm_of_the_cluster(monkeypatch, tmp_path):
    monkeypatch.setenv("HISTORIZE_CLUSTER_DIR", str(tmp_path / "cluster"))
    monkeypatch.setenv("HISTORIZE_JAVA_OPTIONS", " -XX:+UseParallelGC ")
    settings = cluster.Settings.from_environment()
    confs = dict(arg.split("=", 1) for arg in cluster._thrift_command(settings) if arg.startswith("spark."))
    assert confs["spark.driver.extraJavaOptions"].startswith("-XX:+UseParallelGC -Dderby.system.home=")
    assert confs["spark.executor.extraJavaOptions"] == "-XX:+UseParallelGC"
    launched = []
    monkeypatch.setattr(cluster.subprocess, "Popen", lambda command, **kwargs: launched.append(kwargs["env"]) or
                        type("Child", (), {"pid": 1})())
    cluster._launch(settings, "master", ["true"])
    assert launched[0]["SPARK_DAEMON_JAVA_OPTS"] == "-XX:+UseParallelGC"

    monkeypatch.delenv("HISTORIZE_JAVA_OPTIONS")
    settings = cluster.Settings.from_environment()
    confs = dict(arg.split("=", 1) for arg in cluster._thrift_command(settings) if arg.startswith("spark."))
    assert confs["spark.driver.extraJavaOptions"].startswith("-Dderby.system.home=")
    assert "spark.executor.extraJavaOptions" not in confs
    cluster._launch(settings, "master", ["true"])
    assert launched[1] is None  # the environment as it is


def test_small_tables_gives_the_cluster_the_tests_settings_where_unset(monkeypatch, tmp_path):
    monkeypatch.setenv("HISTORIZE_CLUSTER_DIR", str(tmp_path / "cluster"))
    for name in ("HISTORIZE_SHUFFLE_PARTITIONS", "HISTORIZE_ADAPTIVE", "HISTORIZE_JAVA_OPTIONS", "JAVA_HOME"):
        monkeypatch.setenv(name, "")  # restored by monkeypatch when the test ends
        monkeypatch.delenv(name)
    monkeypatch.setenv("HISTORIZE_CODEGEN", "true")  # set: kept
    started = []
    monkeypatch.setattr(cluster, "start", lambda settings: started.append(settings) or 1.0)
    assert cluster.main(["start", "--small-tables"]) == 0
    settings = started[0]
    assert (settings.shuffle_partitions, settings.adaptive, settings.codegen, settings.java_options) == (
        1, "false", "true", "-XX:+UseParallelGC")
    newest = dbt_runner.newest_java_home()
    assert os.environ.get("JAVA_HOME") == (str(newest) if newest else None)
    assert cluster.main(["start", "--small"]) == 2


def jdk(folder, name: str, version: str | None, java: bool = True) -> None:
    home = folder / name
    (home / "bin").mkdir(parents=True)
    if java:
        (home / "bin" / "java").write_text("")
    if version is not None:
        (home / "release").write_text(f'IMPLEMENTOR="x"\nJAVA_VERSION="{version}"\nOS_NAME="Linux"\n')


def test_the_tests_jvm_is_the_newest_java_spark_runs_on(tmp_path):
    jdk(tmp_path, "jdk-17", "17.0.15")
    jdk(tmp_path, "jdk-21", "21.0.2")
    jdk(tmp_path, "jdk-24", "24.0.1")  # a version Spark does not run on
    jdk(tmp_path, "jdk-25-early", "25.0.2")  # before the first 25 Spark supports
    jdk(tmp_path, "jdk-26", None)  # no release file: version unknown
    jdk(tmp_path, "jre-25", "25.0.3", java=False)  # no java to run
    assert dbt_runner.newest_java_home([tmp_path, tmp_path / "absent"]) == tmp_path / "jdk-21"
    jdk(tmp_path, "temurin-25", "25.0.3")
    assert dbt_runner.newest_java_home([tmp_path]) == tmp_path / "temurin-25"
    assert dbt_runner.newest_java_home([tmp_path / "absent"]) is None
