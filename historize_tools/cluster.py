"""A real Spark cluster on this machine, from the pyspark wheel and Delta's jars:
a standalone master, one worker (its own JVM, cores and memory) and a Spark
Thrift Server whose executors run on that worker. dbt's `thrift` target talks
to it as to any cluster's Thrift server.

    python -m historize_tools.cluster start    (what ./scripts/cluster.sh start runs)
    python -m historize_tools.cluster start --small-tables
                                               with the tests' Spark settings, where not set
                                               (dbt_runner.small_tables: CI's cluster)
    python -m historize_tools.cluster status   exit 0 when up, 3 when not
    python -m historize_tools.cluster stop

Settings (environment): HISTORIZE_CLUSTER_DIR (logs, pids, warehouse and
metastore; default <root>/.cluster), HISTORIZE_MASTER_PORT (7077),
HISTORIZE_MASTER_UI_PORT (8080: the master's JSON status), HISTORIZE_WORKER_CORES
(2), HISTORIZE_WORKER_MEMORY (3g), HISTORIZE_EXECUTOR_MEMORY (2g),
HISTORIZE_THRIFT_DRIVER_MEMORY (2g), HISTORIZE_THRIFT_PORT (10000),
HISTORIZE_CLUSTER_START_TIMEOUT (seconds, 180), HISTORIZE_SHUFFLE_PARTITIONS
(twice the worker's cores; 1 for tables of a few rows, as the tests'),
HISTORIZE_ADAPTIVE and HISTORIZE_CODEGEN (true; false for tables of a few rows),
HISTORIZE_JAVA_OPTIONS (options of every JVM the cluster starts; none by default).
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from historize_tools.dbt_runner import ROOT, small_tables

HOST = "127.0.0.1"
THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
DELTA_JARS = ("delta-spark_4.2_2.13-4.4.0.jar", "delta-storage-4.4.0.jar")
# Hive's function registry needs it and Spark 4's distribution leaves it out: without
# it, a session close that initialises the registry fails (scripts/setup.sh fetches it).
HIVE_JARS = ("hive-llap-common-2.3.10.jar",)
PROCESSES = ("master", "worker", "thrift")
NOT_UP = 3


@dataclass(frozen=True)
class Settings:
    home: Path
    master_port: int
    master_ui_port: int
    worker_cores: int
    worker_memory: str
    executor_memory: str
    driver_memory: str
    thrift_port: int
    start_timeout: float
    shuffle_partitions: int
    adaptive: str
    codegen: str
    java_options: str

    @classmethod
    def from_environment(cls) -> "Settings":
        env = os.environ.get
        worker_cores = _number_setting("HISTORIZE_WORKER_CORES", "2", int)
        return cls(
            home=Path(env("HISTORIZE_CLUSTER_DIR", str(ROOT / ".cluster"))).resolve(),
            master_port=_number_setting("HISTORIZE_MASTER_PORT", "7077", int),
            master_ui_port=_number_setting("HISTORIZE_MASTER_UI_PORT", "8080", int),
            worker_cores=worker_cores,
            worker_memory=env("HISTORIZE_WORKER_MEMORY", "3g"),
            executor_memory=env("HISTORIZE_EXECUTOR_MEMORY", "2g"),
            driver_memory=env("HISTORIZE_THRIFT_DRIVER_MEMORY", "2g"),
            thrift_port=_number_setting("HISTORIZE_THRIFT_PORT", "10000", int),
            start_timeout=_number_setting("HISTORIZE_CLUSTER_START_TIMEOUT", "180", float),
            shuffle_partitions=_number_setting("HISTORIZE_SHUFFLE_PARTITIONS", str(max(2, 2 * worker_cores)), int,
                                               minimum=1),
            adaptive=_boolean_setting("HISTORIZE_ADAPTIVE"),
            codegen=_boolean_setting("HISTORIZE_CODEGEN"),
            java_options=env("HISTORIZE_JAVA_OPTIONS", "").strip(),
        )

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.master_port}"

    def pid_file(self, process: str) -> Path:
        return self.home / f"{process}.pid"

    def log_file(self, process: str) -> Path:
        return self.home / "logs" / f"{process}.log"


def _number_setting(name: str, default: str, kind: type, minimum: int | None = None):
    value = os.environ.get(name, default)
    try:
        number = kind(value)
    except ValueError:
        raise ClusterError(f"{name} is {value!r}; expected a number") from None
    if minimum is not None and number < minimum:
        raise ClusterError(f"{name} is {value!r}; expected a number of at least {minimum}")
    return number


def _boolean_setting(name: str) -> str:
    value = os.environ.get(name, "true").strip().lower()
    if value not in ("true", "false"):
        raise ClusterError(f"{name} is {value!r}; expected true or false")
    return value


class ClusterError(RuntimeError):
    """The cluster could not start: the message says which part, with its log's tail."""


def _spark_bin(name: str) -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / name)


def _server_class_path() -> str:
    jars = [ROOT / ".jars" / name for name in DELTA_JARS + HIVE_JARS]
    missing = [str(jar) for jar in jars if not jar.is_file()]
    if missing:
        raise ClusterError(f"jars are missing: {', '.join(missing)}; run ./scripts/setup.sh first")
    return ":".join(str(jar) for jar in jars)


def _thrift_command(settings: Settings) -> list[str]:
    """spark-submit of the Thrift server to the master: Delta's extension and
    catalog, Delta's jars and the Hive jar on the driver's and the executors'
    class path (one machine: the same paths), a warehouse and a Derby metastore
    of the cluster's own."""
    class_path = _server_class_path()
    confs = {
        "spark.driver.extraClassPath": class_path,
        "spark.executor.extraClassPath": class_path,
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.sql.warehouse.dir": str(settings.home / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={settings.home / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": f"{settings.java_options} -Dderby.system.home={settings.home} "
                                         f"-Dlog4j.configurationFile={ROOT / 'profiles' / 'log4j2.properties'}".strip(),
        "spark.sql.session.timeZone": "UTC",
        # HISTORIZE_SHUFFLE_PARTITIONS=1, HISTORIZE_ADAPTIVE / HISTORIZE_CODEGEN=false, as for the
        # tests' embedded Spark (profiles/profiles.yml): on tables of a few rows, more tasks,
        # re-planning and generated code cost more than they save.
        "spark.sql.shuffle.partitions": str(settings.shuffle_partitions),
        "spark.sql.adaptive.enabled": settings.adaptive,
        "spark.sql.codegen.wholeStage": settings.codegen,
        "spark.sql.codegen.factoryMode": "FALLBACK" if settings.codegen == "true" else "NO_CODEGEN",
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.ui.enabled": "false",
        "spark.executor.memory": settings.executor_memory,
        "spark.cores.max": str(settings.worker_cores),
    }
    if settings.java_options:
        confs["spark.executor.extraJavaOptions"] = settings.java_options
    command = [_spark_bin("spark-submit"), "--master", settings.master_url, "--name", "historize-thrift",
               "--driver-memory", settings.driver_memory, "--class", THRIFT_SERVER_CLASS]
    for name, value in confs.items():
        command += ["--conf", f"{name}={value}"]
    return command + ["spark-internal", "--hiveconf", f"hive.server2.thrift.port={settings.thrift_port}",
                      "--hiveconf", f"hive.server2.thrift.bind.host={HOST}"]


def _commands(settings: Settings) -> dict[str, list[str]]:
    spark_class = _spark_bin("spark-class")
    return {
        "master": [spark_class, "org.apache.spark.deploy.master.Master", "--host", HOST,
                   "--port", str(settings.master_port), "--webui-port", str(settings.master_ui_port)],
        "worker": [spark_class, "org.apache.spark.deploy.worker.Worker", settings.master_url, "--host", HOST,
                   "--cores", str(settings.worker_cores), "--memory", settings.worker_memory,
                   "--work-dir", str(settings.home / "work"), "--webui-port", "0"],
        "thrift": _thrift_command(settings),
    }


def running_pid(settings: Settings, process: str) -> int | None:
    """The process's pid when it is running."""
    try:
        pid = int(settings.pid_file(process).read_text())
    except (OSError, ValueError):
        return None
    try:
        os.waitpid(pid, os.WNOHANG)  # reaps it if it is this process's child and has exited
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
        return pid
    except OSError:
        return None


def group_running(settings: Settings, process: str) -> bool:
    """Whether any process of the process's group is still alive: the one started and
    the JVM it launched, which holds the process's port until it has exited."""
    try:
        pid = int(settings.pid_file(process).read_text())
    except (OSError, ValueError):
        return False
    running_pid(settings, process)  # reaps it if it is this process's child and has exited
    try:
        os.killpg(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _launch(settings: Settings, process: str, command: list[str]) -> None:
    log = settings.log_file(process)
    log.parent.mkdir(parents=True, exist_ok=True)
    # the master's and the worker's own JVMs (spark-class reads SPARK_DAEMON_JAVA_OPTS)
    env = dict(os.environ, SPARK_DAEMON_JAVA_OPTS=settings.java_options) if settings.java_options else None
    with log.open("ab") as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 cwd=settings.home, start_new_session=True, env=env)
    settings.pid_file(process).write_text(str(child.pid))


def _log_tail(settings: Settings, process: str, lines: int = 30) -> str:
    try:
        text = settings.log_file(process).read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


def master_status(settings: Settings) -> dict | None:
    """The master's JSON status (workers, applications), or None when it does not answer."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{settings.master_ui_port}/json/", timeout=5) as response:
            return json.load(response)
    except (OSError, urllib.error.URLError, ValueError):
        return None


def _thrift_answers(settings: Settings) -> bool:
    """True when the Thrift server runs a query."""
    try:
        with socket.create_connection((HOST, settings.thrift_port), timeout=2):
            pass
    except OSError:
        return False
    from pyhive import hive

    try:
        connection = hive.connect(host=HOST, port=settings.thrift_port, username="historize")
        try:
            cursor = connection.cursor()
            cursor.execute("select 1")
            return cursor.fetchall() == [(1,)]
        finally:
            connection.close()
    except Exception:  # the server is still starting: any failure means "not yet"
        return False


def _wait(settings: Settings, process: str, ready, what: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        if ready():
            return
        if running_pid(settings, process) is None:
            raise ClusterError(f"the {process} exited before {what}; the end of its log "
                               f"({settings.log_file(process)}):\n{_log_tail(settings, process)}")
        time.sleep(1)
    raise ClusterError(f"the {process} did not come up ({what}) within {settings.start_timeout:.0f} s; the end of "
                       f"its log ({settings.log_file(process)}):\n{_log_tail(settings, process)}")


def _worker_registered(settings: Settings) -> bool:
    status = master_status(settings)
    return bool(status) and any(worker.get("state") == "ALIVE" for worker in status.get("workers", []))


def _port_free(port: int) -> bool:
    """Whether a server could listen on the port: as the JVM's server sockets do, the
    probe reuses an address whose only sockets are closed connections (TIME_WAIT, as a
    killed server's connections stay for a minute)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
            return True
        except OSError:
            return False


def start(settings: Settings) -> float:
    """Starts what is not running, waits until the Thrift server answers; returns the seconds it took."""
    began = time.monotonic()
    deadline = began + settings.start_timeout
    settings.home.mkdir(parents=True, exist_ok=True)
    commands = _commands(settings)
    checks = {
        "master": (lambda: master_status(settings) is not None, f"its status on port {settings.master_ui_port}"),
        "worker": (lambda: _worker_registered(settings), "registered with the master"),
        "thrift": (lambda: _thrift_answers(settings), f"answering on port {settings.thrift_port}"),
    }
    ports = {"master": settings.master_port, "thrift": settings.thrift_port}
    try:
        for process in PROCESSES:
            if running_pid(settings, process) is None:
                while group_running(settings, process) and time.monotonic() < deadline:
                    time.sleep(0.2)  # a killed one's JVM is still exiting, holding its port
                if process in ports and not _port_free(ports[process]):
                    raise ClusterError(f"port {ports[process]} of the {process} is taken by another program; "
                                       f"set HISTORIZE_{'MASTER' if process == 'master' else 'THRIFT'}_PORT")
                _launch(settings, process, commands[process])
            ready, what = checks[process]
            _wait(settings, process, ready, what, deadline)
    except ClusterError:
        stop(settings)
        raise
    return time.monotonic() - began


def stop(settings: Settings) -> list[str]:
    """Stops the Thrift server, the worker and the master (each with its children); returns what it stopped."""
    stopped = []
    for process in reversed(PROCESSES):
        pid = running_pid(settings, process)
        if pid is not None:
            for signal_number, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
                try:
                    os.killpg(pid, signal_number)
                except ProcessLookupError:
                    break
                end = time.monotonic() + wait
                while time.monotonic() < end and group_running(settings, process):
                    time.sleep(0.2)
                if not group_running(settings, process):
                    break
            stopped.append(process)
        settings.pid_file(process).unlink(missing_ok=True)
    return stopped


def status(settings: Settings) -> tuple[bool, str]:
    """Whether the cluster is up (every process running, the server answering), and a report."""
    running = {process: running_pid(settings, process) for process in PROCESSES}
    lines = [f"{process}: {'running, pid ' + str(pid) if pid else 'not running'}" for process, pid in running.items()]
    master = master_status(settings)
    if master is not None:
        for worker in master.get("workers", []):
            lines.append(f"worker {worker.get('id')}: {worker.get('state')}, {worker.get('coresused')} of "
                         f"{worker.get('cores')} cores used")
        for application in master.get("activeapps", []):
            lines.append(f"application {application.get('name')}: {application.get('state')}, "
                         f"{application.get('cores')} cores")
    answers = _thrift_answers(settings)
    lines.append(f"thrift server on {HOST}:{settings.thrift_port}: {'answering' if answers else 'not answering'}")
    return all(running.values()) and answers, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv not in (["start"], ["start", "--small-tables"], ["status"], ["stop"]):
        print("usage: python -m historize_tools.cluster start [--small-tables]|status|stop", file=sys.stderr)
        return 2
    if argv[1:] == ["--small-tables"]:
        small_tables()
    try:
        settings = Settings.from_environment()
    except ClusterError as error:
        print(f"cluster: {error}", file=sys.stderr)
        return 2
    if argv[0] == "start":
        try:
            seconds = start(settings)
        except ClusterError as error:
            print(f"cluster: {error}", file=sys.stderr)
            return 1
        print(f"cluster: up in {seconds:.1f} s: master {settings.master_url}, thrift server "
              f"{HOST}:{settings.thrift_port} (target `thrift`); logs in {settings.home / 'logs'}")
        return 0
    if argv[0] == "stop":
        stopped = stop(settings)
        print(f"cluster: stopped {', '.join(stopped) or 'nothing (nothing was running)'}")
        return 0
    up, report = status(settings)
    print(report)
    return 0 if up else NOT_UP


if __name__ == "__main__":
    sys.exit(main())
