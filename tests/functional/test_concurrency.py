"""Two runs writing one table at once, for each materialization. Run A goes
through the Spark Thrift Server (a separate dbt process, as on a cluster) and
its select holds it after it has read its table's version; run B loads the
same table in the meantime. A must fail on each table without writing
anything, B's loads must stand, and A rerun must end as B then A."""
from __future__ import annotations

import datetime as dt
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import AUDIT, DIM, PROGRAM_CONFIG, PROGRAM_SOURCE, SENTINEL, D, T1, T2, T3
from historize_tools import dbt_runner as dbt
from reference import MILLISECOND as MS
from reference import TMAX

# With `hold` (a JVM system property's prefix), a model's select keeps its run
# waiting until the test sets `<hold>.<model>` (at most 60 s, on one task
# slot of the two). The select is first evaluated when the run computes its
# change set, after it has read its table's version.
HOLD = ("{% if var('hold', '') %}cross join (select count(*) as held from range(0, 600, 1, 1) "
        "where java_method('java.lang.Thread', 'sleep', cast(case when java_method('java.lang.Boolean', 'getBoolean', "
        "'{{ var('hold') }}.{{ this.identifier }}') = 'true' then 0 else 100 end + 0 * id as bigint)) = 'null') as hold"
        "{% endif %}")
MODELS = {
    "hist": ("materialized='scd2_hist', unique_key='id'", "id int, name string"),
    "dim_program": (PROGRAM_CONFIG, PROGRAM_SOURCE),
    "ft": ("materialized='fivetran_history', unique_key='id'", "id int, val string, _fivetran_start timestamp, _fivetran_op string"),
}
E = {n: dt.datetime(2026, 2, n) for n in range(1, 6)}  # event times of the Fivetran batches
LOADS = {  # model: rows of its source for the first load, for B (at T2) and for A (at T3)
    "hist": ([(1, "a"), (2, "b")], [(1, "a2"), (2, "b")], [(1, "a"), (2, "b3"), (3, "c")]),
    "dim_program": ([("P1", D[1], "N1", 10, 100), ("P2", D[2], "M1", 20, 200)],
                    [("P1", D[1], "N1", 12, 100), ("P2", D[2], "M2", 20, 200)],
                    [("P1", D[1], "N1", 11, 100), ("P2", D[2], "M1", 20, 200), ("P3", D[3], "Q", 30, 300)]),
    "ft": ([(1, "x", E[1], "upsert")], [(1, "y", E[2], "upsert")], [(2, "z", E[3], "upsert"), (1, "w", E[4], "upsert")]),
}
SHOWN = {
    "hist": ("id, name, version_started_at, version_ended_at, version_state, load_run_id", "id, version_started_at"),
    "dim_program": (DIM, "program_id, version"),
    "ft": ("id, val, _fivetran_start, _fivetran_end, _fivetran_active, _fivetran_synced", "id, _fivetran_start"),
}
AFTER_B = {
    "hist": [(1, "a", T1, T2, "changed", "rB"), (1, "a2", T2, None, "changed", "rB"), (2, "b", T1, None, "new", "r1")],
    "dim_program": [
        ("P1", D[1], "N1", 10, 100, None, T1, T2, False, 1, "source_load"),
        ("P1", D[1], "N1", 12, 100, 10, T2, SENTINEL, True, 2, "source_load"),
        ("P2", D[2], "M2", 20, 200, None, T1, SENTINEL, True, 1, "source_load"),
    ],
    "ft": [(1, "x", E[1], E[2] - MS, False, T1), (1, "y", E[2], TMAX, True, T2)],
}
AFTER_B_THEN_A = {
    "hist": [(1, "a", T1, T2, "changed", "rB"), (1, "a2", T2, T3, "changed", "rA"), (1, "a", T3, None, "changed", "rA"),
             (2, "b", T1, T3, "changed", "rA"), (2, "b3", T3, None, "changed", "rA"), (3, "c", T3, None, "new", "rA")],
    "dim_program": [
        ("P1", D[1], "N1", 10, 100, None, T1, T2, False, 1, "source_load"),
        ("P1", D[1], "N1", 12, 100, 10, T2, T3, False, 2, "source_load"),
        ("P1", D[1], "N1", 11, 100, 12, T3, SENTINEL, True, 3, "source_load"),
        ("P2", D[2], "M1", 20, 200, None, T1, SENTINEL, True, 1, "source_load"),
        ("P3", D[3], "Q", 30, 300, None, T3, SENTINEL, True, 1, "source_load"),
    ],
    "ft": [(1, "x", E[1], E[2] - MS, False, T1), (1, "y", E[2], E[4] - MS, False, T2), (1, "w", E[4], TMAX, True, T3),
           (2, "z", E[3], TMAX, True, T3)],
}
EVERYTHING = ["created_on", "current_program_name", "eligibility_threshold", "funding_cap"]
AUDIT_AFTER_B = [
    ("P1", "INSERT", EVERYTHING, T1, "source_load", "r1"),
    ("P2", "INSERT", EVERYTHING, T1, "source_load", "r1"),
    ("P1", "UPDATE", ["eligibility_threshold"], T2, "source_load", "rB"),
    ("P2", "TYPE1_UPDATE", ["current_program_name"], T2, "source_load", "rB"),
]
AUDIT_AFTER_A = AUDIT_AFTER_B + [
    ("P1", "UPDATE", ["eligibility_threshold"], T3, "source_load", "rA"),
    ("P2", "TYPE1_UPDATE", ["current_program_name"], T3, "source_load", "rA"),
    ("P3", "INSERT", EVERYTHING, T3, "source_load", "rA"),
]


def variables(at: dt.datetime, run_id: str, load: int, hold: str = "") -> dict:
    return {"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S"), "load_run_id": run_id, "load": load, "hold": hold}


def write_sources(project, load: int) -> None:
    for name, (_, ddl) in MODELS.items():
        project.create_table(f"src_{name}_{load}", ddl, LOADS[name][load])


class HeldRun:
    """Run A: `dbt run` through the Thrift server, one model at a time, its output read as it comes."""

    def __init__(self, project, port: int, run_vars: dict) -> None:
        env = dict(os.environ, HISTORIZE_THRIFT_HOST="127.0.0.1", HISTORIZE_THRIFT_PORT=str(port),
                   HISTORIZE_SCHEMA=project.schema)
        command = [str(Path(sys.executable).parent / "dbt"), "run", "--target", "thrift", "--threads", "1",
                   "--project-dir", str(project.path), "--target-path", str(project.path / "target_thrift"),
                   "--log-path", str(project.path / "logs_thrift"), "--vars", str(run_vars)]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.process.stdout], daemon=True).start()

    def next_held_model(self, timeout: float = 120) -> str:
        """The model A starts next, once its select is executing (a Spark job is active)."""
        deadline = time.monotonic() + timeout
        started = None
        tracker = dbt.spark().sparkContext.statusTracker()
        while started is None or not tracker.getActiveJobsIds():
            assert time.monotonic() < deadline, f"run A never held:\n{''.join(self.output)}"
            try:
                line = self.lines.get(timeout=0.2)
                self.output.append(line)
                if match := re.search(r"START sql \w+ model \S+\.(\w+)", line):
                    started = match.group(1)
            except queue.Empty:
                assert self.process.poll() is None or started, f"run A ended early:\n{''.join(self.output)}"
        return started

    def finish(self) -> str:
        self.process.wait(timeout=300)
        time.sleep(0.5)
        while not self.lines.empty():
            self.output.append(self.lines.get())
        return "".join(self.output)


def test_a_run_overtaken_by_another_fails_cleanly_for_every_materialization(project, thrift_port):
    for name, (config, _) in MODELS.items():
        project.model(name, f"""
            {{{{ config({config}) }}}}
            select src.* from {{{{ target.schema }}}}.src_{name}_{{{{ var('load') }}}} as src {HOLD}
            """)
    for load in range(3):
        write_sources(project, load)
    project.run("run", variables=variables(T1, "r1", 0))
    versions = {name: project.commits(name) - 1 for name in MODELS}

    release = f"historize.test.{project.schema}"
    run_a = HeldRun(project, thrift_port, variables(T3, "rA", 2, hold=release))
    for _ in MODELS:
        held = run_a.next_held_model()
        project.run("run", "--select", held, variables=variables(T2, "rB", 1))
        assert run_a.process.poll() is None, "run A went on before run B ended"
        dbt.spark()._jvm.java.lang.System.setProperty(f"{release}.{held}", "true")
    output = run_a.finish()

    assert run_a.process.returncode == 1, output
    for name in MODELS:
        assert (f"{project.schema}.{name} was written by another run after version {versions[name]}, which this run "
                f"read; nothing of this run was written to it. Rerun the model") in output, output
        columns, order = SHOWN[name]
        assert project.table(name, columns, order) == AFTER_B[name], name
    assert project.table("dim_program_audit", AUDIT, "change_ts, program_id") == AUDIT_AFTER_B

    project.run("run", variables=variables(T3, "rA", 2))
    for name in MODELS:
        columns, order = SHOWN[name]
        assert project.table(name, columns, order) == AFTER_B_THEN_A[name], name
    assert project.table("dim_program_audit", AUDIT, "change_ts, program_id") == AUDIT_AFTER_A
