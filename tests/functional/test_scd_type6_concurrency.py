"""scd_type6: two runs writing one dimension at once. Run A goes through the
Spark Thrift Server (a separate dbt process, as on a cluster) and is held after
it has read the dimension; run B loads in the meantime. A must fail without
writing anything, B's load must stand, and A rerun must end correct."""
from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import dbt_inprocess as dbt
from test_scd_type6 import AUDIT, DIM, SENTINEL, SOURCE, T1, T2, T3, D

CONFIG = ("materialized='scd_type6', unique_key='program_id', type0_columns=['created_on'], "
          "type1_columns=['current_program_name'], "
          "type3_columns={'eligibility_threshold': 'previous_eligibility_threshold'}, audit=true")
# With `hold` (a JVM system property's name), a pre-hook keeps the run waiting,
# after it has taken the dimension's version, until the test sets that property
# (at most 60 s; on one task slot of the two).
HOLD = ("{% if var('hold', '') %}select count(*) from range(0, 600, 1, 1) where java_method('java.lang.Thread', 'sleep', "
        "cast(case when java_method('java.lang.Boolean', 'getBoolean', '{{ var('hold') }}') = 'true' then 0 else 100 end "
        "+ 0 * id as bigint)) = 'null'{% endif %}")
MODEL = f"""
{{{{ config({CONFIG}, pre_hook="{HOLD}") }}}}
select * from {{{{ target.schema }}}}.{{{{ var('source') }}}}
"""


def variables(at: dt.datetime, run_id: str, source: str, hold: str = "") -> dict:
    return {"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S"), "load_run_id": run_id, "source": source, "hold": hold}


def start_thrift_run(project, port: int, run_vars: dict) -> subprocess.Popen:
    env = dict(os.environ, HISTORIZE_THRIFT_HOST="127.0.0.1", HISTORIZE_THRIFT_PORT=str(port),
               HISTORIZE_SCHEMA=project.schema)
    command = [str(Path(sys.executable).parent / "dbt"), "run", "--target", "thrift",
               "--project-dir", str(project.path), "--target-path", str(project.path / "target_thrift"),
               "--log-path", str(project.path / "logs_thrift"),
               "--vars", str(run_vars)]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_until_holding(process: subprocess.Popen, timeout: float = 120) -> None:
    """Until run A's select is executing (a Spark job is active), which it
    reaches only after reading the dimension's version."""
    tracker = dbt.spark().sparkContext.statusTracker()
    deadline = time.monotonic() + timeout
    while not tracker.getActiveJobsIds():
        assert process.poll() is None, f"run A ended early:\n{process.communicate()[0]}"
        assert time.monotonic() < deadline, "run A never reached its select"
        time.sleep(0.2)


def test_a_run_overtaken_by_another_fails_cleanly_and_its_rerun_ends_correct(project, thrift_port):
    project.model("dim_program", MODEL)
    project.create_table("stg_first", SOURCE, [("P1", D[1], "N1", 10, 100), ("P2", D[2], "M1", 20, 200)])
    project.create_table("stg_a", SOURCE, [("P1", D[1], "N1", 11, 100), ("P2", D[2], "M1", 20, 200), ("P3", D[3], "Q", 30, 300)])
    project.create_table("stg_b", SOURCE, [("P1", D[1], "N1", 12, 100), ("P2", D[2], "M2", 20, 200)])
    project.run("run", variables=variables(T1, "r1", "stg_first"))

    release = f"historize.test.{project.schema}.release"
    run_a = start_thrift_run(project, thrift_port, variables(T3, "rA", "stg_a", hold=release))
    wait_until_holding(run_a)
    project.run("run", variables=variables(T2, "rB", "stg_b"))
    assert run_a.poll() is None, "run A went on before run B ended"
    dbt.spark()._jvm.java.lang.System.setProperty(release, "true")
    output = run_a.communicate(timeout=300)[0]

    assert run_a.returncode == 1, output
    assert "was written by another run after version 1, which this run read; nothing of this run was written" in output
    # B's load stands alone: one current row per key, no row and no audit row of A
    assert project.table("dim_program", DIM, "program_id, version") == [
        ("P1", D[1], "N1", 10, 100, None, T1, T2, False, 1, "source_load"),
        ("P1", D[1], "N1", 12, 100, 10, T2, SENTINEL, True, 2, "source_load"),
        ("P2", D[2], "M2", 20, 200, None, T1, SENTINEL, True, 1, "source_load"),
    ]
    everything = ["created_on", "current_program_name", "eligibility_threshold", "funding_cap"]
    after_b = [
        ("P1", "INSERT", everything, T1, "source_load", "r1"),
        ("P2", "INSERT", everything, T1, "source_load", "r1"),
        ("P1", "UPDATE", ["eligibility_threshold"], T2, "source_load", "rB"),
        ("P2", "TYPE1_UPDATE", ["current_program_name"], T2, "source_load", "rB"),
    ]
    assert project.table("dim_program_audit", AUDIT, "change_ts, program_id") == after_b

    # A again, after B: applied on top of B's load
    project.run("run", variables=variables(T3, "rA", "stg_a"))
    assert project.table("dim_program", DIM, "program_id, version") == [
        ("P1", D[1], "N1", 10, 100, None, T1, T2, False, 1, "source_load"),
        ("P1", D[1], "N1", 12, 100, 10, T2, T3, False, 2, "source_load"),
        ("P1", D[1], "N1", 11, 100, 12, T3, SENTINEL, True, 3, "source_load"),
        ("P2", D[2], "M1", 20, 200, None, T1, SENTINEL, True, 1, "source_load"),
        ("P3", D[3], "Q", 30, 300, None, T3, SENTINEL, True, 1, "source_load"),
    ]
    assert project.table("dim_program_audit", AUDIT, "change_ts, program_id") == after_b + [
        ("P1", "UPDATE", ["eligibility_threshold"], T3, "source_load", "rA"),
        ("P2", "TYPE1_UPDATE", ["current_program_name"], T3, "source_load", "rA"),
        ("P3", "INSERT", everything, T3, "source_load", "rA"),
    ]
