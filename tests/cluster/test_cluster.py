"""historize on a real Spark cluster: the Thrift server's work runs on the
worker, with Hive's function registry; a refused connection is a clear error.
The demo's loads on the cluster are test_demo.py's."""
from __future__ import annotations

import socket

from historize_tools import cluster, demo
from historize_tools import dbt_runner as dbt

from projects import on_cluster

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
