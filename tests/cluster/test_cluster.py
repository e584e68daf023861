"""historize on a real Spark cluster: the Thrift server's work runs on the
worker; the demo's four loads (every materialization, a schema change, the
invariant tests, the point-in-time models) end in exactly the tables they end
in on the embedded Spark (tests/demo_tables.txt, which the embedded demo's
test checks too), even when the server is killed in the middle of a load and
the load rerun; a refused connection is a clear error."""
from __future__ import annotations

import os
import signal
import socket
import time

from historize_tools import cluster, demo
from historize_tools import dbt_runner as dbt

from conftest import DEMO_TABLES, on_cluster

CLUSTER_SCHEMA = "tcluster"


def test_the_thrift_server_runs_on_the_worker(running_cluster):
    status = cluster.master_status(running_cluster)
    workers = [worker for worker in status["workers"] if worker["state"] == "ALIVE"]
    assert len(workers) == 1, status["workers"]
    applications = [app for app in status["activeapps"] if app["name"] == "historize-thrift"]
    assert len(applications) == 1, status["activeapps"]
    # the server's executors hold the worker's cores: its queries run there
    assert applications[0]["cores"] == workers[0]["cores"] == running_cluster.worker_cores
    assert workers[0]["coresused"] == running_cluster.worker_cores
    with on_cluster(running_cluster, CLUSTER_SCHEMA):
        _, rows = demo.query("set spark.master")
    assert rows == [("spark.master", running_cluster.master_url)]


def test_the_thrift_server_loads_hive_s_function_registry(running_cluster):
    # Closing a session can initialise Hive's function registry, which loads a jar Spark 4's
    # distribution leaves out (hive-llap-common): without it on the server's class path, the
    # close fails at random with NoClassDefFoundError: .../llap/security/LlapSigner$Signable.
    # get_splits is the function whose class needs it.
    registry = "org.apache.hadoop.hive.ql.exec.FunctionRegistry"
    with on_cluster(running_cluster, CLUSTER_SCHEMA):
        _, rows = demo.query(f"select java_method('{registry}', 'getFunctionNames')")
    names = set(rows[0][0].strip("[]").split(", "))
    assert {"get_splits", "abs", "concat"} <= names, sorted(names)


class KillServerAfter:
    """A dbt callback that kills the Thrift server (SIGKILL, its whole process
    group) once `node` has run a statement starting with `after`, as the node's
    next statement is sent: that statement and the rest of the load never run."""

    def __init__(self, settings: cluster.Settings, node: str, after: str) -> None:
        self.settings, self.node, self.after = settings, node, after
        self.seen = self.killed = False

    def __call__(self, event) -> None:
        if self.killed or event.info.name != "SQLQuery" or not event.data.node_info.unique_id.endswith("." + self.node):
            return
        statement = event.data.sql.split("*/", 1)[-1].strip().lower()
        if self.seen:
            pid = int(self.settings.pid_file("thrift").read_text())
            os.killpg(pid, signal.SIGKILL)
            while cluster.group_running(self.settings, "thrift"):  # until its port is free
                time.sleep(0.1)
            self.killed = True
        elif statement.startswith(self.after):
            self.seen = True


def test_the_demo_on_the_cluster_ends_in_the_embedded_tables(running_cluster):
    with on_cluster(running_cluster, CLUSTER_SCHEMA):
        demo.reset()
        seconds = []
        for load in demo.LOADS:
            began = time.monotonic()
            if load["demo_load"] == 2:
                # the server dies right after the product history's MERGE committed
                killer = KillServerAfter(running_cluster, "rc_aw_product_hist", "merge into")
                logged: list[str] = []
                failed = dbt.run(["build", "--select", "demo"], variables=load, expect_success=False,
                                 callbacks=[killer, lambda event: logged.append(event.info.msg)])
                assert killer.killed and not failed.success
                # dbt-spark's summary says "unexpected exception" for the statement the server
                # died in (models running beside it fail to connect); its log says what happened
                assert "rc_aw_product_hist: unexpected exception" in dbt.failure_messages(failed).splitlines()
                log = "\n".join(logged)
                assert "Connection lost during query execution" in log, log
                assert f"Could not connect to any of [('{cluster.HOST}', {running_cluster.thrift_port})]" in log, log
                restarted = cluster.start(running_cluster)
                print(f"thrift server restarted in {restarted:.1f} s")
            demo.build(load)  # every model and test of the load passes, or this raises
            seconds.append(time.monotonic() - began)
        on_the_cluster = demo.tables_text(CLUSTER_SCHEMA)
        demo.reset()
    print(f"demo loads on the cluster: {', '.join(f'{s:.1f} s' for s in seconds)}")
    # Load 2's record is its rerun's, which found the killed run's MERGE committed and wrote nothing.
    assert on_the_cluster == with_ledger_row(DEMO_TABLES.read_text(), (
        "rc_aw_product_hist", "2026-02-01 06:00:00", "demo-load-2", "nothing to write", "0", "0", "0"))


def with_ledger_row(tables: str, replacement: tuple) -> str:
    """The demo's tables with the load ledger's row of the same load_run_id replaced (laid out again)."""
    heading = "\n== historize_demo.historize_loads\n"
    before, ledger = tables.split(heading)
    lines = [line for line in ledger.splitlines() if line.startswith("|")]
    names, *rows = [tuple(cell.strip() for cell in line.strip("|").split("|")) for line in lines]
    assert any(row[2] == replacement[2] for row in rows), (rows, replacement)
    return before + heading + demo.text_table(list(names), [replacement if row[2] == replacement[2] else row
                                                             for row in rows])


def test_a_refused_connection_is_a_clear_error(running_cluster):
    with socket.socket() as probe:
        probe.bind((cluster.HOST, 0))
        closed_port = probe.getsockname()[1]
    with on_cluster(running_cluster, CLUSTER_SCHEMA, port=closed_port):
        result = dbt.run(["run", "--select", "rc_aw_product_hist"], variables=demo.LOADS[0], expect_success=False)
    message = dbt.failure_messages(result)
    assert not result.success
    assert (f"failed to connect: TTransportException: Could not connect to any of [('{cluster.HOST}', "
            f"{closed_port})]") in message, message
    assert "Traceback" not in message
