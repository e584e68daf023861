"""Benchmark of the history materializations on generated data.

    python scripts/bench.py --keys 100000 --repeat 3

Generates a snapshot of N keys and a next snapshot with given fractions of
changed, deleted and new keys (deterministic from --seed), loads the first
into each contender's history table, then times the incremental load of the
second, restoring the table between repetitions. Reports the median, min and
max wall time, the Delta commits and the rows written, and writes JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import dbt_inprocess as dbt

SCHEMA = "historize_bench"
PROJECT_YML = dbt.project_yml("bench")


def generate(session, keys: int, attributes: int, changed: float, deleted: float, new: float, seed: int) -> None:
    """Two snapshots: `snapshot_1` (N keys) and `snapshot_2` (the given fractions changed, deleted, new)."""
    def attribute_columns(version_expr: str) -> str:
        parts = []
        for i in range(attributes):
            kind = i % 3
            value = f"xxhash64(id, {seed}, {i}, {version_expr})"
            if kind == 0:
                parts.append(f"case when {value} % 10 = 0 then null else concat('s', cast({value} % 100000 as string)) end as a{i}")
            elif kind == 1:
                parts.append(f"cast({value} % 1000000 as bigint) as a{i}")
            else:
                parts.append(f"timestamp'2020-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, abs({value} % 100000000)) as a{i}")
        return ",\n".join(parts)

    session.sql(f"create schema if not exists {SCHEMA}")
    session.sql(f"""
        create or replace table {SCHEMA}.snapshot_1 using delta as
        select id, {attribute_columns('0')} from range({keys})
    """)
    # a key's fate in load 2 comes from a hash of the key: deleted, changed or unchanged
    fate = f"abs(xxhash64(id, {seed}, 'fate')) % 1000000 / 1000000.0"
    session.sql(f"""
        create or replace table {SCHEMA}.snapshot_2 using delta as
        select id, {attribute_columns(f"case when {fate} < {deleted + changed} then 1 else 0 end")}
        from range({keys})
        where {fate} >= {deleted}
        union all
        select id, {attribute_columns('0')} from range({keys}, {keys + int(keys * new)})
    """)


def run_model(project: Path, model: str, snapshot: str, at: str) -> float:
    started = time.perf_counter()
    dbt.run(["run", "--select", model], project_dir=project,
            variables={"snapshot": snapshot, "load_timestamp": at, "load_run_id": f"{snapshot}@{at}"})
    return time.perf_counter() - started


def delta_version(session, table: str) -> int:
    return session.sql(f"describe history {table} limit 1").collect()[0]["version"]


def rows_written(session, table: str, since: int) -> int:
    total = 0
    for row in session.sql(f"describe history {table}").where(f"version > {since}").collect():
        metrics = row["operationMetrics"] or {}
        total += int(metrics.get("numOutputRows", 0))
    return total


def generate_fivetran(session, keys: int, versions: int, events: int, seed: int) -> None:
    """`fivetran_bench`: keys x versions Fivetran versions; `fivetran_batch`: events change events
    (80% upserts, 15% updates with unmodified cells, 5% deletes) after every existing version."""
    tmax = "timestamp'9999-12-31 23:59:59.999+00:00'"
    session.sql(f"""
        create or replace table {SCHEMA}.fivetran_bench (
            id bigint, a0 string, a1 bigint, _fivetran_start timestamp, _fivetran_end timestamp,
            _fivetran_active boolean, _fivetran_synced timestamp
        ) using delta tblproperties ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2',
                                     'delta.minWriterVersion' = '5')
    """)
    session.sql(f"""
        insert into {SCHEMA}.fivetran_bench
        select
            k.id,
            concat('v', cast(xxhash64(k.id, v.n, {seed}) % 1000 as string)),
            xxhash64(k.id, v.n) % 100000,
            timestamp'2025-01-01 00:00:00+00:00' + make_interval(0, 0, 0, v.n, 0, 0, 0),
            case when v.n = {versions - 1} then {tmax}
                 else timestamp'2025-01-01 00:00:00+00:00' + make_interval(0, 0, 0, v.n + 1, 0, 0, 0) - interval 1 millisecond end,
            v.n = {versions - 1},
            timestamp'2025-06-01 00:00:00+00:00'
        from range({keys}) as k
        cross join (select id as n from range({versions})) as v
    """)
    kind = f"abs(xxhash64(id, {seed}, 'op')) % 100"
    session.sql(f"""
        create or replace table {SCHEMA}.fivetran_batch using delta as
        select
            id % {keys} as id,
            case when {kind} < 80 then concat('n', cast(id as string)) when {kind} < 95 then 'unmod' end as a0,
            case when {kind} < 80 then cast(id as string) when {kind} < 95 then cast(id * 2 as string)
                else null end as a1,
            timestamp'2025-02-01 00:00:00+00:00' + make_interval(0, 0, 0, 0, 0, 0, id div {keys}) as _fivetran_start,
            case when {kind} < 80 then 'upsert' when {kind} < 95 then 'update' else 'delete' end as _fivetran_op
        from range({events})
    """)


def generate_type6(session, keys: int, type2: float, type1: float, seed: int) -> None:
    """`type6_1` (N keys) and `type6_2`: the given fractions with a Type 2 or a Type 1 change."""
    fate = f"abs(xxhash64(id, {seed}, 'type6')) % 1000000 / 1000000.0"
    for number, changed in ((1, "false"), (2, "true")):
        t2_version = f"case when {changed} and {fate} < {type2} then 1 else 0 end"
        t1_version = f"case when {changed} and {fate} >= {type2} and {fate} < {type2 + type1} then 1 else 0 end"
        session.sql(f"""
            create or replace table {SCHEMA}.type6_{number} using delta as
            select
                id,
                date'2020-01-01' + cast(id % 1000 as int) as created_on,
                concat('name-', cast(xxhash64(id, {t1_version}) % 10000 as string)) as display_name,
                concat('tier-', cast(xxhash64(id, {t2_version}) % 5 as string)) as tier,
                cast(xxhash64(id, 'score', {t2_version}) % 1000 as int) as score,
                concat('region-', cast(id % 50 as string)) as region
            from range({keys})
        """)


ATTRIBUTE_HASH = "sha2(to_json(struct({columns})), 256)"


def pyspark_two_pass(session, table: str, snapshot: str, at: str, attributes: list[str]) -> None:
    """The hand-written job users write today (the close-then-append pattern):
    pass A closes changed and deleted open versions, pass B appends new ones."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    loaded_at = F.lit(at).cast("timestamp")
    incoming = session.table(snapshot).withColumn(
        "row_hash", F.sha2(F.to_json(F.struct(*attributes)), 256))
    current = (session.table(table).where("version_ended_at is null")
               .select("id", F.col("row_hash").alias("current_hash")))
    changes = incoming.join(current, "id", "full_outer").where(
        F.col("current_hash").isNull() | F.col("row_hash").isNull() | (F.col("row_hash") != F.col("current_hash")))
    changes = changes.cache()
    to_close = changes.where("current_hash is not null").select(
        "id", F.when(F.col("row_hash").isNull(), "deleted").otherwise("changed").alias("state"))
    (DeltaTable.forName(session, table).alias("t")
        .merge(to_close.alias("s"), "t.id = s.id and t.version_ended_at is null")
        .whenMatchedUpdate(set={"version_ended_at": loaded_at, "version_state": "s.state"})
        .execute())
    new_versions = changes.where("row_hash is not null").select(
        "id", *attributes, "row_hash", loaded_at.alias("version_started_at"),
        F.lit(None).cast("timestamp").alias("version_ended_at"),
        F.when(F.col("current_hash").isNull(), "new").otherwise("changed").alias("version_state"))
    new_versions.write.format("delta").mode("append").saveAsTable(table)
    changes.unpersist()


def lower_bound(session, snapshot: str, open_versions_of: str, output: str, attributes: list[str]) -> None:
    """A plain Spark job: read the snapshot and the open versions once, write only the changed rows."""
    session.sql(f"""
        insert into {output}
        select s.*
        from (select *, {ATTRIBUTE_HASH.format(columns=', '.join(attributes))} as h from {snapshot}) as s
        full outer join (select id, row_hash from {open_versions_of} where version_ended_at is null) as o
            on s.id = o.id
        where s.h is distinct from o.row_hash
    """)


def timed(action, repeat: int, reset) -> dict:
    """Times `action` `repeat` times, each after `reset`."""
    times = []
    for _ in range(repeat):
        reset()
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return {"seconds_median": statistics.median(times), "seconds_min": min(times), "seconds_max": max(times)}


def history_signature(session, table: str) -> list:
    """What every contender must agree on: each version's key, attributes, interval and state."""
    columns = ", ".join(c for c in session.table(f"{SCHEMA}.snapshot_1").columns)
    return session.sql(f"""
        select {columns}, version_started_at, version_ended_at, version_state from {table}
    """).orderBy("id", "version_started_at").collect()


def time_incremental(session, project: Path, name: str, first: dict, second: dict, repeat: int,
                     prepare=None) -> dict:
    """Times `second` after `first`, restoring the table to its state after `first` each time."""
    table = f"{SCHEMA}.{name}"
    if prepare is None:
        run_model(project, name, **first)
    base = delta_version(session, table)
    times, commits, written = [], [], []
    for _ in range(repeat):
        session.sql(f"restore table {table} to version as of {base}")
        before = delta_version(session, table)
        times.append(run_model(project, name, **second))
        commits.append(delta_version(session, table) - before)
        written.append(rows_written(session, table, before))
    return {"contender": name, "seconds_median": statistics.median(times), "seconds_min": min(times),
            "seconds_max": max(times), "commits": commits[-1], "rows_written": written[-1]}


MODELS = {
    "scd2_hist_merge": "{{ config(materialized='scd2_hist', unique_key='id', strategy='merge') }}\n"
                       "select * from historize_bench.{{ var('snapshot') }}\n",
    "scd2_hist_ordered": "{{ config(materialized='scd2_hist', unique_key='id', strategy='ordered') }}\n"
                         "select * from historize_bench.{{ var('snapshot') }}\n",
    "fivetran_bench": "{{ config(materialized='fivetran_history', unique_key='id', unmodified_string='unmod') }}\n"
                      "select * from historize_bench.{{ var('snapshot') }}\n",
    "type6_bench": "{{ config(materialized='scd_type6', unique_key='id', type0_columns=['created_on'], "
                   "type1_columns=['display_name']) }}\nselect * from historize_bench.{{ var('snapshot') }}\n",
}
FIVETRAN_YML = """\
version: 2
models:
  - name: fivetran_bench
    columns:
      - {name: a1, data_type: bigint}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", choices=["scd2", "fivetran", "scd_type6", "all"], default="all")
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--attributes", type=int, default=6)
    parser.add_argument("--changed", type=float, default=0.10)
    parser.add_argument("--deleted", type=float, default=0.01)
    parser.add_argument("--new", type=float, default=0.01)
    parser.add_argument("--fivetran-versions", type=int, default=1_000_000)
    parser.add_argument("--fivetran-events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--output", type=Path, default=dbt.ROOT / "bench" / "results.json")
    args = parser.parse_args(argv)

    dbt.environment()
    os.environ["HISTORIZE_SCHEMA"] = SCHEMA
    project = dbt.package_project(Path(tempfile.mkdtemp(prefix="historize-bench-")), PROJECT_YML)
    for name, sql in MODELS.items():
        (project / "models" / f"{name}.sql").write_text(sql)
    (project / "models" / "bench.yml").write_text(FIVETRAN_YML)
    dbt.run(["debug", "--quiet"], project_dir=project)
    session = dbt.spark()
    session.sql(f"drop schema if exists {SCHEMA} cascade")
    session.sql(f"create schema {SCHEMA}")

    results = []

    def report(result: dict, **facts) -> None:
        result.update(facts)
        results.append(result)
        print(json.dumps(result), flush=True)

    if args.scenario in ("scd2", "all"):
        generate(session, args.keys, args.attributes, args.changed, args.deleted, args.new, args.seed)
        load = {"keys": args.keys, "changed": args.changed, "deleted": args.deleted, "new": args.new}
        for name in ("scd2_hist_merge", "scd2_hist_ordered"):
            report(time_incremental(session, project, name,
                                    {"snapshot": "snapshot_1", "at": "2026-01-01 00:00:00"},
                                    {"snapshot": "snapshot_2", "at": "2026-01-02 00:00:00"}, args.repeat), **load)
        attributes = [c for c in session.table(f"{SCHEMA}.snapshot_1").columns if c != "id"]
        # the hand-written job starts from the same first load, with its own row hash
        hand = f"{SCHEMA}.pyspark_two_pass"
        session.sql(f"""
            create or replace table {hand} using delta
            tblproperties ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')
            as select id, {', '.join(attributes)},
                {ATTRIBUTE_HASH.format(columns=', '.join(attributes))} as row_hash,
                version_started_at, version_ended_at, version_state
            from {SCHEMA}.scd2_hist_merge version as of 1
        """)
        base = delta_version(session, hand)
        result = timed(lambda: pyspark_two_pass(session, hand, f"{SCHEMA}.snapshot_2", "2026-01-02 00:00:00", attributes),
                       args.repeat, lambda: session.sql(f"restore table {hand} to version as of {base}"))
        report({"contender": "pyspark_two_pass", **result}, **load)
        output = f"{SCHEMA}.lower_bound_output"
        session.sql(f"create or replace table {output} using delta as select *, '' as h from {SCHEMA}.snapshot_1 where false")
        result = timed(lambda: lower_bound(session, f"{SCHEMA}.snapshot_2", hand, output, attributes), args.repeat,
                       lambda: session.sql(f"restore table {hand} to version as of {base}"))
        report({"contender": "lower_bound", **result}, **load)
        # a fast wrong answer cannot win: the contenders' histories must be the same
        pyspark_two_pass(session, hand, f"{SCHEMA}.snapshot_2", "2026-01-02 00:00:00", attributes)
        reference = history_signature(session, f"{SCHEMA}.scd2_hist_merge")
        for name in ("scd2_hist_ordered", "pyspark_two_pass"):
            if history_signature(session, f"{SCHEMA}.{name}") != reference:
                raise SystemExit(f"bench: {name} does not hold the same history as scd2_hist_merge")
        print("bench: scd2_hist_merge, scd2_hist_ordered and pyspark_two_pass hold the same history", flush=True)
    if args.scenario in ("fivetran", "all"):
        versions_per_key = 4
        generate_fivetran(session, args.fivetran_versions // versions_per_key, versions_per_key,
                          args.fivetran_events, args.seed)
        report(time_incremental(session, project, "fivetran_bench", {},
                                {"snapshot": "fivetran_batch", "at": "2026-01-02 00:00:00"}, args.repeat,
                                prepare="table generated"),
               versions=args.fivetran_versions, events=args.fivetran_events)
    if args.scenario in ("scd_type6", "all"):
        generate_type6(session, args.keys, 0.10, 0.10, args.seed)
        report(time_incremental(session, project, "type6_bench",
                                {"snapshot": "type6_1", "at": "2026-01-01 00:00:00"},
                                {"snapshot": "type6_2", "at": "2026-01-02 00:00:00"}, args.repeat),
               keys=args.keys, type2_changed=0.10, type1_changed=0.10)

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
