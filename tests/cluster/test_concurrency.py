"""Two runs writing one table at once, for each materialization, on the
cluster (./scripts/cluster.sh): run A, a dbt process of its own through the
Thrift server, is held right before its first write of each model, after every
read its load makes; meanwhile run B, a second dbt invocation through the same
server, loads the same tables. B's load is earlier
than A's, later than A's, or the very same load. Where A's load read the table
before its write (scd_type6 with an audit), A must fail on the table without writing
anything, naming the table and saying to rerun; B's loads must stand; A rerun
must end as B then A, be refused as older than the table's newest load, or
change nothing. An scd2_hist or fivetran_history load, or an scd_type6 load without
an audit, is its MERGE alone, which reads the table itself: held before it, A's load comes after B's as its rerun
would; a write that lands while that MERGE runs races it on Delta's commit,
which fails the second to commit."""
from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from historize_tools import dbt_runner as dbt
from historize_tools import demo

from projects import DIM, PROGRAM_CONFIG, PROGRAM_SOURCE, SENTINEL, TargetTables, D, T1, T2, T3, T4, as_text
from reference import MILLISECOND as MS
from reference import TMAX

HELD_RUN = Path(__file__).resolve().parent.parent / "held_run.py"
RACES = ("earlier", "later", "same")  # B's load against A's
KINDS = {  # the materialization's config, and its select's columns
    # a property value holding a double quote and a backslash: the Thrift server's text of a map
    # is then no JSON, and a load reads its table's properties again by `show tblproperties`
    "hist": ("materialized='scd2_hist', unique_key='id', meta={'tblproperties': {'historize.note': 'a \"note\" \\\\ here'}}",
             "id int, name string"),
    "dim": (PROGRAM_CONFIG, PROGRAM_SOURCE),
    "ft": ("materialized='fivetran_history', unique_key='id'", "id int, val string, _fivetran_start timestamp, _fivetran_op string"),
}
MODELS = [f"{kind}_{race}" for kind in KINDS for race in RACES]
REFUSES_OLDER = ("hist_later", "dim_later")  # a Fivetran batch is placed by its events' times
READ_BEFORE_WRITE = ("dim",)  # the kinds whose load reads the table before its write, with a guard
PAUSE_MS = 15000  # run A's pause while its scd2_hist MERGE reads its select
E = {n: dt.datetime(2026, 2, n) for n in range(1, 6)}  # event times of the Fivetran batches
LOADS = {  # kind: rows of its select for the first load (at T1), for B and for A (at T3)
    "hist": ([(1, "a"), (2, "b")], [(1, "a2"), (2, "b")], [(1, "a"), (2, "b3"), (3, "c")]),
    "dim": ([("P1", D[1], "N1", 10, 100), ("P2", D[2], "M1", 20, 200)],
            [("P1", D[1], "N1", 12, 100), ("P2", D[2], "M2", 20, 200)],
            [("P1", D[1], "N1", 11, 100), ("P2", D[2], "M1", 20, 200), ("P3", D[3], "Q", 30, 300)]),
    "ft": ([(1, "x", E[1], "upsert")], [(1, "y", E[2], "upsert")], [(2, "z", E[3], "upsert"), (1, "w", E[4], "upsert")]),
}
A_LOAD = (T3, "rA", 2)
B_LOAD = {"earlier": (T2, "rB", 1), "later": (T4, "rB", 1), "same": A_LOAD}  # time, run id, select's rows
SHOWN = {
    "hist": ("id, name, version_started_at, version_ended_at, version_state, load_run_id", "id, version_started_at"),
    "dim": (DIM, "program_id, version"),
    "ft": ("id, val, _fivetran_start, _fivetran_end, _fivetran_active, _fivetran_synced", "id, _fivetran_start"),
}
EVERYTHING = ["created_on", "current_program_name", "eligibility_threshold", "funding_cap"]
FIRST_AUDIT = [("P1", "INSERT", EVERYTHING, T1, "source_load", "r1"), ("P2", "INSERT", EVERYTHING, T1, "source_load", "r1")]


def after_b(kind: str, at: dt.datetime) -> list[tuple]:
    """The table after the first load and B's (its select's second rows) at `at`."""
    return {
        "hist": [(1, "a", T1, at, "changed", "rB"), (1, "a2", at, None, "changed", "rB"), (2, "b", T1, None, "new", "r1")],
        "dim": [("P1", D[1], "N1", 10, 100, None, T1, at, False, 1, "source_load"),
                ("P1", D[1], "N1", 12, 100, 10, at, SENTINEL, True, 2, "source_load"),
                ("P2", D[2], "M2", 20, 200, None, T1, SENTINEL, True, 1, "source_load")],
        "ft": [(1, "x", E[1], E[2] - MS, False, T1), (1, "y", E[2], TMAX, True, at)],
    }[kind]


def audit_after_b(at: dt.datetime) -> list[tuple]:
    return FIRST_AUDIT + [("P1", "UPDATE", ["eligibility_threshold"], at, "source_load", "rB"),
                          ("P2", "TYPE1_UPDATE", ["current_program_name"], at, "source_load", "rB")]


# The table after the first load and A's alone (B's load the same as A's).
AFTER_A = {
    "hist": [(1, "a", T1, None, "new", "r1"), (2, "b", T1, T3, "changed", "rA"), (2, "b3", T3, None, "changed", "rA"),
             (3, "c", T3, None, "new", "rA")],
    "dim": [("P1", D[1], "N1", 10, 100, None, T1, T3, False, 1, "source_load"),
            ("P1", D[1], "N1", 11, 100, 10, T3, SENTINEL, True, 2, "source_load"),
            ("P2", D[2], "M1", 20, 200, None, T1, SENTINEL, True, 1, "source_load"),
            ("P3", D[3], "Q", 30, 300, None, T3, SENTINEL, True, 1, "source_load")],
    "ft": [(1, "x", E[1], E[4] - MS, False, T1), (1, "w", E[4], TMAX, True, T3), (2, "z", E[3], TMAX, True, T3)],
}
AUDIT_AFTER_A = FIRST_AUDIT + [("P1", "UPDATE", ["eligibility_threshold"], T3, "source_load", "rA"),
                               ("P3", "INSERT", EVERYTHING, T3, "source_load", "rA")]
# The table after the first load, B's (at T2) and A's, in that order.
AFTER_B_THEN_A = {
    "hist": [(1, "a", T1, T2, "changed", "rB"), (1, "a2", T2, T3, "changed", "rA"), (1, "a", T3, None, "changed", "rA"),
             (2, "b", T1, T3, "changed", "rA"), (2, "b3", T3, None, "changed", "rA"), (3, "c", T3, None, "new", "rA")],
    "dim": [("P1", D[1], "N1", 10, 100, None, T1, T2, False, 1, "source_load"),
            ("P1", D[1], "N1", 12, 100, 10, T2, T3, False, 2, "source_load"),
            ("P1", D[1], "N1", 11, 100, 12, T3, SENTINEL, True, 3, "source_load"),
            ("P2", D[2], "M1", 20, 200, None, T1, SENTINEL, True, 1, "source_load"),
            ("P3", D[3], "Q", 30, 300, None, T3, SENTINEL, True, 1, "source_load")],
    "ft": [(1, "x", E[1], E[2] - MS, False, T1), (1, "y", E[2], E[4] - MS, False, T2), (1, "w", E[4], TMAX, True, T3),
           (2, "z", E[3], TMAX, True, T3)],
}
AUDIT_AFTER_B_THEN_A = audit_after_b(T2) + [("P1", "UPDATE", ["eligibility_threshold"], T3, "source_load", "rA"),
                                            ("P2", "TYPE1_UPDATE", ["current_program_name"], T3, "source_load", "rA"),
                                            ("P3", "INSERT", EVERYTHING, T3, "source_load", "rA")]


def expected(kind: str, race: str) -> dict:
    """The table (and audit table) once B has loaded, and once A has been rerun after it."""
    ft_later = AFTER_B_THEN_A["ft"][:1] + [(1, "y", E[2], E[4] - MS, False, T4)] + AFTER_B_THEN_A["ft"][2:]
    return {
        "earlier": {"after_b": after_b(kind, T2), "audit_after_b": audit_after_b(T2),
                    "after_rerun": AFTER_B_THEN_A[kind], "audit_after_rerun": AUDIT_AFTER_B_THEN_A},
        "later": {"after_b": after_b(kind, T4), "audit_after_b": audit_after_b(T4),
                  "after_rerun": ft_later if kind == "ft" else after_b(kind, T4), "audit_after_rerun": audit_after_b(T4)},
        "same": {"after_b": AFTER_A[kind], "audit_after_b": AUDIT_AFTER_A,
                 "after_rerun": AFTER_A[kind], "audit_after_rerun": AUDIT_AFTER_A},
    }[race]


def variables(load: tuple) -> dict:
    at, run_id, rows = load
    return {"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S"), "load_run_id": run_id, "load": rows}


def start_run_a(project, port: int, hold_dir: Path, threads: int, before: str | None = None,
                pause_ms: int = 0, models: list[str] | None = None) -> subprocess.Popen:
    """Run A through the Thrift server, every model at once (or `models`), each held before its
    first write (or its first statement starting with `before`); `pause_ms`, the var `pause_ms`."""
    env = dict(os.environ, HISTORIZE_THRIFT_HOST="127.0.0.1", HISTORIZE_THRIFT_PORT=str(port),
               HISTORIZE_SCHEMA=project.schema, HISTORIZE_TARGET="thrift")
    hold_point = ["--before", before] if before else []
    command = [sys.executable, str(HELD_RUN), str(hold_dir), *hold_point,
               "run", *(["--select", *models] if models else []), "--target", "thrift", "--threads", str(threads),
               "--project-dir", str(project.path),
               "--target-path", str(project.path / "target_a"), "--log-path", str(project.path / "logs_a"),
               "--vars", str({**variables(A_LOAD), "pause_ms": pause_ms})]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_until_held(run_a: subprocess.Popen, hold_dir: Path, models: list[str], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while {path.stem for path in hold_dir.glob("*.held")} != set(models):
        if run_a.poll() is not None or time.monotonic() > deadline:
            run_a.kill()
            raise AssertionError(f"run A did not reach every hold:\n{run_a.communicate()[0]}")
        time.sleep(0.2)


def test_a_run_overtaken_by_another_fails_cleanly_or_comes_after_it(cluster_project, running_cluster, tmp_path):
    models = {f"{kind}_{race}": (kind, race) for kind in KINDS for race in RACES}
    for name, (kind, _) in models.items():
        cluster_project.model(name, f"""
            {{{{ config({KINDS[kind][0]}) }}}}
            select src.* from {{{{ target.schema }}}}.src_{kind}_{{{{ var('load') }}}} as src
            """)
    tables = TargetTables(cluster_project.schema)
    for kind, (_, ddl) in KINDS.items():
        for load, rows in enumerate(LOADS[kind]):
            tables.create(f"src_{kind}_{load}", ddl, rows)
    cluster_project.run("run", variables=variables((T1, "r1", 0)))
    read_versions = {name: tables.commits(name) - 1 for name in models}

    hold_dir = tmp_path / "hold"
    hold_dir.mkdir()
    run_a = start_run_a(cluster_project, running_cluster.thrift_port, hold_dir, threads=len(models))
    wait_until_held(run_a, hold_dir, list(models))
    for race in RACES:
        cluster_project.run("run", "--select", *(f"{kind}_{race}" for kind in KINDS), variables=variables(B_LOAD[race]))
    # the race: every model of A read its table, then B wrote it, and A has not written yet
    assert run_a.poll() is None, "run A went on before run B ended"
    versions_after_b = {name: tables.versions(name) for name in models}
    (hold_dir / "release").touch()
    output = run_a.communicate(timeout=300)[0]

    assert run_a.returncode == 1, output
    older = ("historize: model {name}: load_timestamp 2026-01-03 06:00:00.000000 is older than 2026-01-04 06:00:00, "
             "the newest time already in {table}{detail}; loads must come in time order. Nothing was written")
    for name, (kind, race) in models.items():
        table = f"{cluster_project.schema}.{name}"
        if kind not in READ_BEFORE_WRITE:
            # its MERGE read B's table: after B's earlier load it applied, after B's later one
            # it is refused as a rerun would be, after the same load it changed nothing
            if name in REFUSES_OLDER:
                assert older.format(name=name, table=table, detail="") in output, output
                assert tables.versions(name) == versions_after_b[name], name
            elif race == "same":
                assert tables.versions(name) == versions_after_b[name], name
            else:
                assert tables.versions(name) == (versions_after_b[name][0] + 1,), name
            assert tables.rows(name, *SHOWN[kind]) == as_text(expected(kind, race)["after_rerun"]), name
            continue
        if name in REFUSES_OLDER:
            # B's later load landed: A is refused as a rerun would be, not told to retry
            detail = f" (written by another run after version {read_versions[name]}, which this run read)"
            assert older.format(name=name, table=table, detail=detail) in output, output
        else:
            assert (f"historize: model {name}: {table} was written by another run after version "
                    f"{read_versions[name]}, which this run read; nothing of this run was written to it. Rerun the "
                    f"model") in output, output
        assert tables.versions(name) == versions_after_b[name], f"run A wrote {name}"
        assert tables.rows(name, *SHOWN[kind]) == as_text(expected(kind, race)["after_b"]), name
        if kind == "dim":
            assert tables.audit(name) == as_text(expected(kind, race)["audit_after_b"]), name

    # A rerun: after B's earlier load, it applies; after B's later one, it is refused
    # again (the Fivetran batch is applied); after the same load, it changes nothing
    versions_before_rerun = {name: tables.versions(name) for name in models}
    rerun = cluster_project.run("run", variables=variables(A_LOAD), expect_success=False)
    assert sorted(line.split(":", 1)[0] for line in dbt.failure_messages(rerun).splitlines()
                  if line.split(":", 1)[0] in models) == sorted(REFUSES_OLDER), dbt.failure_messages(rerun)
    for name in REFUSES_OLDER:
        assert (f"historize: model {name}: load_timestamp 2026-01-03 06:00:00.000000 is older than 2026-01-04 "
                f"06:00:00, the newest time already in {cluster_project.schema}.{name}; loads must come in time order. "
                f"Nothing was written") in dbt.failure_messages(rerun)
    for name, (kind, race) in models.items():
        assert tables.rows(name, *SHOWN[kind]) == as_text(expected(kind, race)["after_rerun"]), name
        if kind == "dim":
            assert tables.audit(name) == as_text(expected(kind, race)["audit_after_rerun"]), name
        if race == "same" or name in REFUSES_OLDER or kind not in READ_BEFORE_WRITE:
            assert tables.versions(name) == versions_before_rerun[name], name


# A load that is its MERGE alone, read slowly: run A's select pauses on one row (key 3 or
# P3, which only A's load holds). scd2_hist's pause is in its filter, so each read of the
# select pauses; scd_type6's is in a column its checks do not read, so one read pauses and
# holds one of the cluster's two cores, leaving the other to a second run.
SLOW_MODELS = {
    "hist": (KINDS["hist"][0], """
        select src.* from {{ target.schema }}.src_hist_{{ var('load') }} as src
        where src.id <> 3 or java_method('java.lang.Thread', 'sleep', cast({{ var('pause_ms', 0) }} as bigint)) is not null
        """),
    "dim": (PROGRAM_CONFIG.replace(", audit=true", ""), """
        select src.program_id, src.created_on, src.current_program_name, src.eligibility_threshold,
            case when src.program_id <> 'P3' or java_method('java.lang.Thread', 'sleep',
                cast({{ var('pause_ms', 0) }} as bigint)) is not null then src.funding_cap end as funding_cap
        from {{ target.schema }}.src_dim_{{ var('load') }} as src
        """),
}
# The other write while A's MERGE runs: a row A's load reads, its run id or change reason set by hand.
BY_HAND = {"hist": ("load_run_id", "id = 1"), "dim": ("change_reason", "program_id = 'P2'")}
SLOW_PAUSE_MS = {"hist": PAUSE_MS, "dim": 40000}


def by_hand(kind: str, rows: list[tuple]) -> list[tuple]:
    """`rows` of SHOWN[kind] with the hand-written value in the row BY_HAND names."""
    if kind == "hist":
        return [row[:5] + ("hand",) if row[0] == 1 else row for row in rows]
    return [row[:10] + ("hand",) if row[0] == "P2" and row[8] else row for row in rows]


@pytest.mark.parametrize("kind", ["hist", "dim"])
def test_a_write_while_a_load_merge_runs_is_settled_by_delta_commit(cluster_project, running_cluster, tmp_path, kind):
    """Run A's load, its MERGE alone (scd2_hist; scd_type6 without an audit), reads its select
    slowly (a pause on one row), and another write commits to the table while that MERGE
    runs, after it read the table. Delta's commit settles the race: whichever of the two
    commits second fails with Delta's conflict and writes nothing (which one depends on when
    the write gets the cluster's cores, which A's pause holds); the table is the other's. A
    rerun of the loser then applies on top. For scd_type6, a second run in the same Spark
    application loads another dimension while A's query is held, and ends before it."""
    tables = TargetTables(cluster_project.schema)
    for load, rows in enumerate(LOADS[kind]):
        tables.create(f"src_{kind}_{load}", KINDS[kind][1], rows)
    config, select = SLOW_MODELS[kind]
    cluster_project.model("slow", f"{{{{ config({config}) }}}}" + select)
    if kind == "dim":
        cluster_project.model("other", f"{{{{ config({config}) }}}} select * from {{{{ target.schema }}}}.src_dim_{{{{ var('load') }}}}")
    cluster_project.run("run", variables=variables((T1, "r1", 0)))
    hold_dir = tmp_path / "hold"
    hold_dir.mkdir()
    run_a = start_run_a(cluster_project, running_cluster.thrift_port, hold_dir, threads=1,
                        pause_ms=SLOW_PAUSE_MS[kind], models=["slow"])
    wait_until_held(run_a, hold_dir, ["slow"])
    commits_before = tables.commits("slow")
    (hold_dir / "release").touch()
    time.sleep(PAUSE_MS / 3000)  # A's MERGE has read the table and is reading its select
    assert run_a.poll() is None, "run A's MERGE ended before the other write began"
    if kind == "dim":
        # no run waits on another's query: B's load of another dimension ends while A's is held
        cluster_project.run("run", "--select", "other", variables=variables(B_LOAD["earlier"]))
        assert run_a.poll() is None, "run A's MERGE ended before run B's load did"
        assert tables.rows("other", *SHOWN["dim"]) == as_text(after_b("dim", T2))
    column, row = BY_HAND[kind]
    update = f"update {cluster_project.schema}.slow set {column} = 'hand' where {row}"
    try:
        demo.query(update)
        write_error = ""
    except Exception as error:  # pyhive's error carries the server's message
        write_error = str(error)
    output = run_a.communicate(timeout=300)[0]

    # the race happened: exactly one of the two failed on Delta's commit, the other committed
    assert tables.commits("slow") == commits_before + 1
    first_load = {"hist": [(1, "a", T1, None, "new", "r1"), (2, "b", T1, None, "new", "r1")],
                  "dim": [("P1", D[1], "N1", 10, 100, None, T1, SENTINEL, True, 1, "source_load"),
                          ("P2", D[2], "M1", 20, 200, None, T1, SENTINEL, True, 1, "source_load")]}[kind]
    if run_a.returncode == 1:
        assert write_error == "", write_error
        assert "[DELTA_CONCURRENT_" in output, output
        assert tables.rows("slow", *SHOWN[kind]) == as_text(by_hand(kind, first_load))
        cluster_project.run("run", "--select", "slow", variables=variables(A_LOAD))
    else:
        assert run_a.returncode == 0, output
        assert "DELTA_CONCURRENT_" in write_error, write_error
        assert tables.rows("slow", *SHOWN[kind]) == as_text(AFTER_A[kind])
        demo.query(update)
    assert tables.rows("slow", *SHOWN[kind]) == as_text(by_hand(kind, AFTER_A[kind]))


def adopter_model(project, tables: TargetTables) -> None:
    """An scd2_hist model adopting an SCD2 table (adopt_from) at its first load."""
    tables.create("legacy", "id int, name string, valid_from timestamp, valid_to timestamp",
                  [(1, "a", T1, None), (2, "b", T1, None)])
    for load, rows in enumerate(LOADS["hist"]):
        tables.create(f"src_hist_{load}", KINDS["hist"][1], rows)
    project.model("adopter", """
        {{ config(materialized='scd2_hist', unique_key='id', adopt_from=target.schema ~ '.legacy',
                  adopt_columns={'valid_from': 'valid_from', 'valid_to': 'valid_to'}) }}
        select src.* from {{ target.schema }}.src_hist_{{ var('load') }} as src
        """)


# After B's earlier load, then A's rerun, whoever adopted the table.
ADOPTED_AFTER_B_THEN_A = [
    (1, "a", T1, T2, "changed", "rB"), (1, "a2", T2, T3, "changed", "rA"), (1, "a", T3, None, "changed", "rA"),
    (2, "b", T1, T3, "changed", "rA"), (2, "b3", T3, None, "changed", "rA"), (3, "c", T3, None, "new", "rA"),
]


def test_an_adopting_run_overtaken_by_another_loads_after_it(cluster_project, running_cluster, tmp_path):
    """Run A's first load of an scd2_hist model adopts an SCD2 table (adopt_from), then is held
    before its MERGE; run B, an earlier load, finds the table and loads it. A's MERGE then reads
    the table B wrote: its load comes after B's, and the adoption stands (its rows carry A's
    run id)."""
    tables = TargetTables(cluster_project.schema)
    adopter_model(cluster_project, tables)
    hold_dir = tmp_path / "hold"
    hold_dir.mkdir()
    run_a = start_run_a(cluster_project, running_cluster.thrift_port, hold_dir, threads=1)
    wait_until_held(run_a, hold_dir, ["adopter"])
    cluster_project.run("run", variables=variables(B_LOAD["earlier"]))
    # the race: A adopted the table, then B wrote it, and A has not written its load yet
    assert run_a.poll() is None, "run A went on before run B ended"
    after_b_load = [(1, "a", T1, T2, "changed", "rB"), (1, "a2", T2, None, "changed", "rB"), (2, "b", T1, None, "new", "rA")]
    assert tables.rows("adopter", *SHOWN["hist"]) == as_text(after_b_load)
    commits_after_b = tables.commits("adopter")
    (hold_dir / "release").touch()
    output = run_a.communicate(timeout=300)[0]

    assert run_a.returncode == 0, output
    assert tables.commits("adopter") == commits_after_b + 1
    assert tables.rows("adopter", *SHOWN["hist"]) == as_text(ADOPTED_AFTER_B_THEN_A)


def test_two_runs_adopting_one_table_at_once_create_it_once(cluster_project, running_cluster, tmp_path):
    """Run A's first load checks the SCD2 table it adopts, then is held before it creates the
    history; run B adopts the same table and loads it. A's create fails on the table B
    created, nothing of A written; A's rerun is an ordinary load after B's."""
    tables = TargetTables(cluster_project.schema)
    adopter_model(cluster_project, tables)
    hold_dir = tmp_path / "hold"
    hold_dir.mkdir()
    run_a = start_run_a(cluster_project, running_cluster.thrift_port, hold_dir, threads=1,
                        before=f"create table {cluster_project.schema}.adopter")
    wait_until_held(run_a, hold_dir, ["adopter"])
    assert "adopter" not in {row[1] for row in demo.query(f"show tables in {cluster_project.schema}")[1]}
    cluster_project.run("run", variables=variables(B_LOAD["earlier"]))
    # the race: A checked the table to adopt, then B adopted it and loaded, and A has not created it yet
    assert run_a.poll() is None, "run A went on before run B ended"
    after_b_load = [(1, "a", T1, T2, "changed", "rB"), (1, "a2", T2, None, "changed", "rB"), (2, "b", T1, None, "new", "rB")]
    assert tables.rows("adopter", *SHOWN["hist"]) == as_text(after_b_load)
    commits_after_b = tables.commits("adopter")
    (hold_dir / "release").touch()
    output = run_a.communicate(timeout=300)[0]

    assert run_a.returncode == 1, output
    assert (f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view `{cluster_project.schema}`.`adopter` "
            "because it already exists.") in output, output
    assert tables.commits("adopter") == commits_after_b, "run A wrote"
    assert tables.rows("adopter", *SHOWN["hist"]) == as_text(after_b_load)
    cluster_project.run("run", variables=variables(A_LOAD))
    assert tables.rows("adopter", *SHOWN["hist"]) == as_text(ADOPTED_AFTER_B_THEN_A)
