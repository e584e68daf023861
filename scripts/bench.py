"""Benchmark of the history materializations against what users use today.

    python scripts/bench.py              # the full run (the README's figures)
    python scripts/bench.py --quick      # tiny sizes, one repetition (CI)

For each case it generates snapshots of N keys (K typed attribute columns with
NULLs; deterministic from --seed), builds each contender's history through
`depth` loads, then times one load with the given fractions of changed,
deleted and new keys, the median of --repeat runs (min and max too), the table
restored to its version before the load in between. Contenders: scd2_hist
(merge, ordered, merge with deletion vectors), dbt's snapshot (check strategy
on all columns, hard_deletes: invalidate), the hand-written PySpark two-pass
job, and the lower bound (read the snapshot and the open versions once, write
only the changed rows). After each case, every contender must hold the same
history. Series: N (size), history depth, change rate; plus fivetran_history
and scd_type6 loads against hand-written equivalents. Writes JSON (--output) and a PNG chart beside it.
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


def attribute_columns(attributes: int, seed: int, version_expr: str) -> str:
    """K attribute columns (strings with NULLs, numbers, timestamps) of a key at a version."""
    parts = []
    for i in range(attributes):
        value = f"xxhash64(id, {seed}, {i}, {version_expr})"
        if i % 3 == 0:
            parts.append(f"case when {value} % 10 = 0 then null else concat('s', cast({value} % 100000 as string)) end as a{i}")
        elif i % 3 == 1:
            parts.append(f"cast({value} % 1000000 as bigint) as a{i}")
        else:
            parts.append(f"timestamp'2020-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, abs({value} % 100000000)) as a{i}")
    return ",\n".join(parts)


def make_snapshot(session, name: str, keys: int, attributes: int, seed: int, base: int = 0,
                  changed: float = 0.0, deleted: float = 0.0, new: float = 0.0) -> None:
    """A snapshot of N keys at version `base`, of which the given fractions are
    deleted or changed (version base + 1), plus new keys. A key's fate is a hash
    of the key, so every contender sees the same data."""
    fate = f"abs(xxhash64(id, {seed}, {base}, 'fate')) % 1000000 / 1000000.0"
    version = f"case when {fate} < {deleted + changed} then {base + 1} else {base} end"
    session.sql(f"""
        create or replace table {SCHEMA}.{name} using delta as
        select id, {attribute_columns(attributes, seed, version)}
        from range({keys})
        where {fate} >= {deleted}
        union all
        select id, {attribute_columns(attributes, seed, '0')} from range({keys}, {keys + int(keys * new)})
    """)


FIVETRAN_TMAX = "timestamp'9999-12-31 23:59:59.999+00:00'"


def generate_fivetran(session, keys: int, versions: int, events: int, seed: int) -> None:
    """`fivetran_bench`: keys x versions Fivetran versions; `fivetran_batch`: events change events
    (80% upserts, 15% updates with unmodified cells, 5% deletes) after every existing version."""
    tmax = FIVETRAN_TMAX
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
    # materialized, not cached: Spark recomputes a cached plan of the table after the MERGE
    changes = changes.localCheckpoint()
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


TYPE6_TYPE2 = ["tier", "score", "region"]
TYPE6_END = "timestamp'9999-12-31 23:59:59'"


def pyspark_type6(session, table: str, snapshot: str, at: str) -> None:
    """The hand-written Type 6 job (created_on Type 0, display_name Type 1, the
    rest Type 2): one MERGE rewrites display_name in every row of a key and
    closes the current row of a Type 2 change or a delete, then an append adds
    the new versions."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    if not session.catalog.tableExists(table):
        session.sql(f"""
            create table {table} using delta as
            select *, {ATTRIBUTE_HASH.format(columns=', '.join(TYPE6_TYPE2))} as _hash,
                timestamp'{at}' as effective_from, {TYPE6_END} as effective_to, true as current_flag,
                1 as version, 'source_load' as change_reason
            from {snapshot}
        """)
        return
    loaded_at = F.lit(at).cast("timestamp")
    incoming = session.table(snapshot).withColumn("_hash", F.sha2(F.to_json(F.struct(*TYPE6_TYPE2)), 256))
    keys = session.table(table).groupBy("id").agg(
        F.max("version").alias("last_version"),
        F.expr("min_by(created_on, version)").alias("first_created_on"),
        F.expr("max_by(display_name, version)").alias("last_name"),
        F.expr("max(case when current_flag then _hash end)").alias("current_hash"))
    joined = incoming.join(keys, "id", "full_outer").select(
        "*",
        (F.col("current_hash").isNotNull() & F.col("_hash").isNull()).alias("deleted"),
        (F.col("_hash").isNotNull() & ~F.col("_hash").eqNullSafe(F.col("current_hash"))).alias("opens"),
        (F.col("_hash").isNotNull() & F.col("last_version").isNotNull()
         & ~F.col("display_name").eqNullSafe(F.col("last_name"))).alias("type1"))
    changes = joined.where("deleted or opens or type1").localCheckpoint()
    closes = "t.current_flag and (s.deleted or (s.opens and s.current_hash is not null))"
    (DeltaTable.forName(session, table).alias("t")
        .merge(changes.alias("s"), "t.id = s.id")
        .whenMatchedUpdate(condition=f"s.type1 or ({closes})", set={
            "display_name": "case when s.type1 then s.display_name else t.display_name end",
            "effective_to": f"case when {closes} then timestamp'{at}' else t.effective_to end",
            "current_flag": f"case when {closes} then false else t.current_flag end",
            "change_reason": f"case when {closes} and s.deleted then 'deleted_in_source' else t.change_reason end"})
        .execute())
    (changes.where("opens").select(
        "id", F.coalesce("first_created_on", "created_on").alias("created_on"), "display_name", *TYPE6_TYPE2,
        "_hash", loaded_at.alias("effective_from"), F.expr(TYPE6_END).alias("effective_to"),
        F.lit(True).alias("current_flag"), (F.coalesce("last_version", F.lit(0)) + 1).alias("version"),
        F.lit("source_load").alias("change_reason"))
        .write.format("delta").mode("append").saveAsTable(table))


def pyspark_fivetran(session, table: str, batch: str, at: str, unmodified: str) -> None:
    """The hand-written Fivetran job for a batch with at most one event per key
    (the measured one): a MERGE closes the active version of each key (1 ms
    before an upsert or update, at a delete's time), then an append adds the
    new versions, an update's unmodified cells filled from the version it follows."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    events = session.table(batch).select(
        "id", "a0", "a1", F.col("_fivetran_start").cast("timestamp").alias("start"), F.lower("_fivetran_op").alias("op"))
    latest = (session.table(table).where("_fivetran_active")
              .select("id", F.col("a0").alias("last_a0"), F.col("a1").alias("last_a1"),
                      F.col("_fivetran_start").alias("last_start")))
    changes = events.join(latest, "id", "left").where("op <> 'update' or last_start is not null").localCheckpoint()
    (DeltaTable.forName(session, table).alias("t")
        .merge(changes.where("last_start is not null and last_start <= start").alias("s"),
               "t.id = s.id and t._fivetran_active")
        .whenMatchedUpdate(set={
            "_fivetran_end": "case when s.op = 'delete' then s.start else s.start - interval 1 millisecond end",
            "_fivetran_active": "false"})
        .execute())
    (changes.where("op <> 'delete'").select(
        "id",
        F.when((F.col("op") == "update") & (F.col("a0") == unmodified), F.col("last_a0")).otherwise(F.col("a0")).alias("a0"),
        F.when((F.col("op") == "update") & (F.col("a1") == unmodified), F.col("last_a1"))
         .otherwise(F.col("a1").cast("bigint")).alias("a1"),
        F.col("start").alias("_fivetran_start"), F.expr(FIVETRAN_TMAX).alias("_fivetran_end"),
        F.lit(True).alias("_fivetran_active"), F.lit(at).cast("timestamp").alias("_fivetran_synced"))
        .write.format("delta").mode("append").saveAsTable(table))


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


# ---------------------------------------------------------------- measuring

def delta_version(session, table: str) -> int:
    return session.sql(f"describe history {table} limit 1").collect()[0]["version"]


WRITE_METRICS = {  # Delta operationMetrics, by what they count, over MERGE / UPDATE / WRITE
    "rows_written": ("numOutputRows",),
    "files_added": ("numTargetFilesAdded", "numAddedFiles", "numFiles"),
    "files_removed": ("numTargetFilesRemoved", "numRemovedFiles"),
    "bytes_added": ("numTargetBytesAdded", "numAddedBytes", "numOutputBytes"),
    "bytes_removed": ("numTargetBytesRemoved", "numRemovedBytes"),
}


def restore(session, table: str, version: int) -> int:
    """Back to `version` before a repetition (a RESTORE commit, when needed);
    returns the version the repetition starts from."""
    if delta_version(session, table) != version:
        session.sql(f"restore table {table} to version as of {version}")
    return delta_version(session, table)


def writes_since(session, table: str, since: int) -> dict:
    """Commits after version `since`, and what they wrote."""
    commits = session.sql(f"describe history {table}").where(f"version > {since}").collect()
    totals = {"commits": len(commits), "operations": sorted(c["operation"] for c in commits)}
    for name, keys in WRITE_METRICS.items():
        totals[name] = sum(int((c["operationMetrics"] or {}).get(key, 0)) for c in commits for key in keys)
    return totals


def timed(action, repeat: int, reset) -> dict:
    """Times `action` `repeat` times, each after `reset`; `started_from` is what
    the last `reset` returned (the table version the last repetition wrote after)."""
    times, started_from = [], None
    for _ in range(repeat):
        started_from = reset()
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return {"seconds_median": statistics.median(times), "seconds_min": min(times), "seconds_max": max(times),
            "repeat": repeat, "started_from": started_from}


# ---------------------------------------------------------------- contenders

MODELS = {
    "scd2_hist_merge": "{{ config(materialized='scd2_hist', unique_key='id', strategy='merge') }}\n"
                       "select * from historize_bench.{{ var('snapshot') }}\n",
    "scd2_hist_ordered": "{{ config(materialized='scd2_hist', unique_key='id', strategy='ordered') }}\n"
                         "select * from historize_bench.{{ var('snapshot') }}\n",
    "scd2_hist_merge_dv": "{{ config(materialized='scd2_hist', unique_key='id', strategy='merge', "
                          "tblproperties={'delta.enableDeletionVectors': 'true'}) }}\n"
                          "select * from historize_bench.{{ var('snapshot') }}\n",
    "fivetran_bench": "{{ config(materialized='fivetran_history', unique_key='id', unmodified_string='unmod') }}\n"
                      "select * from historize_bench.{{ var('snapshot') }}\n",
    "type6_bench": "{{ config(materialized='scd_type6', unique_key='id', type0_columns=['created_on'], "
                   "type1_columns=['display_name']) }}\nselect * from historize_bench.{{ var('snapshot') }}\n",
}
SNAPSHOT = """\
{% snapshot dbt_snapshot %}
{{ config(target_schema='historize_bench', unique_key='id', strategy='check', check_cols='all',
          hard_deletes='invalidate', file_format='delta') }}
select * from historize_bench.{{ var('snapshot') }}
{% endsnapshot %}
"""
FIVETRAN_YML = """\
version: 2
models:
  - name: fivetran_bench
    columns:
      - {name: a1, data_type: bigint}
"""
SCD2_CONTENDERS = ("scd2_hist_merge", "scd2_hist_ordered", "scd2_hist_merge_dv", "dbt_snapshot", "pyspark_two_pass")
QUICK_CONTENDERS = ("scd2_hist_merge", "dbt_snapshot", "pyspark_two_pass")


def dbt_load(project: Path, name: str, snapshot: str, at: str) -> None:
    command = ["snapshot"] if name == "dbt_snapshot" else ["run"]
    dbt.run(command + ["--select", name], project_dir=project,
            variables={"snapshot": snapshot, "load_timestamp": at, "load_run_id": f"{snapshot}@{at}"})


def load_into(session, project: Path, name: str, snapshot: str, at: str, attributes: list[str]) -> None:
    """One load of `snapshot` into contender `name`'s table."""
    if name != "pyspark_two_pass":
        dbt_load(project, name, snapshot, at)
    elif session.catalog.tableExists(f"{SCHEMA}.{name}"):
        pyspark_two_pass(session, f"{SCHEMA}.{name}", f"{SCHEMA}.{snapshot}", at, attributes)
    else:
        session.sql(f"""
            create table {SCHEMA}.{name} using delta
            tblproperties ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')
            as select *, {ATTRIBUTE_HASH.format(columns=', '.join(attributes))} as row_hash,
                timestamp'{at}' as version_started_at, cast(null as timestamp) as version_ended_at, 'new' as version_state
            from {SCHEMA}.{snapshot}
        """)


def history_signature(session, name: str, attributes: list[str]) -> list:
    """What every contender must agree on: each key's versions, in order, and which is open."""
    table = f"{SCHEMA}.{name}"
    start, end = (("dbt_valid_from", "dbt_valid_to") if name == "dbt_snapshot"
                  else ("version_started_at", "version_ended_at"))
    return session.sql(f"""
        select id, {', '.join(attributes)}, {end} is null as is_open,
            row_number() over (partition by id order by {start}) as version_number
        from {table}
    """).orderBy("id", "version_number").collect()


def scd2_case(session, project: Path, keys: int, attributes: int, depth: int, changed: float, deleted: float,
              new: float, repeat: int, seed: int, contenders: tuple[str, ...]) -> list[dict]:
    """One measured load: each contender's table is built through `depth` loads
    (every key changes in each), then the load with the given fractions is timed
    `repeat` times, the table restored in between; the lower bound too. Checks
    that all contenders hold the same history after it."""
    for name in contenders + ("lower_bound_output",):
        session.sql(f"drop table if exists {SCHEMA}.{name}")
    history = []
    for version in range(depth):
        make_snapshot(session, f"history_{version}", keys, attributes, seed, base=version)
        history.append((f"history_{version}", f"2026-01-{version + 1:02d} 00:00:00"))
    make_snapshot(session, "measured", keys, attributes, seed, base=depth - 1, changed=changed, deleted=deleted, new=new)
    at = f"2026-02-01 00:00:00"
    columns = [c for c in session.table(f"{SCHEMA}.measured").columns if c != "id"]
    case = {"keys": keys, "depth": depth, "changed": changed, "deleted": deleted, "new": new}
    results, bases = [], {}
    for name in contenders:
        for snapshot, when in history:
            load_into(session, project, name, snapshot, when, columns)
        bases[name] = delta_version(session, f"{SCHEMA}.{name}")
        results.append(timed_load(session, name, f"{SCHEMA}.{name}",
                                  lambda: load_into(session, project, name, "measured", at, columns), repeat, **case))
    if "pyspark_two_pass" in contenders:
        output = f"{SCHEMA}.lower_bound_output"
        def empty_output() -> int:
            session.sql(f"create or replace table {output} using delta as select *, '' as h from {SCHEMA}.measured where false")
            return delta_version(session, output)

        opened = f"{SCHEMA}.pyspark_two_pass version as of {bases['pyspark_two_pass']}"
        result = timed(lambda: lower_bound(session, f"{SCHEMA}.measured", opened, output, columns), repeat, empty_output)
        started_from = result.pop("started_from")
        results.append({"contender": "lower_bound", **case, **result, **writes_since(session, output, started_from)})
        print(json.dumps(results[-1]), flush=True)
    assert_same_history(list(contenders), lambda name: history_signature(session, name, columns), case)
    return results


def timed_load(session, contender: str, table: str, load, repeat: int, **facts) -> dict:
    """Times `load` into `table` `repeat` times, restoring the table in between."""
    base = delta_version(session, table)
    result = timed(load, repeat, lambda: restore(session, table, base))
    started_from = result.pop("started_from")
    result = {"contender": contender, **facts, **result, **writes_since(session, table, started_from)}
    print(json.dumps(result), flush=True)
    return result


def assert_same_history(tables: list[str], signature, case: dict) -> None:
    """Fails unless `signature(table)` is the same for every table: a fast wrong answer cannot win."""
    reference = signature(tables[0])
    for table in tables[1:]:
        if signature(table) != reference:
            raise SystemExit(f"bench: {table} does not hold the same history as {tables[0]} ({case})")
    print(f"bench: {', '.join(tables)} hold the same history", flush=True)


def query_signature(session, query: str):
    """A signature: the rows of `query`, formatted with the table's name."""
    return lambda table: session.sql(query.format(table=f"{SCHEMA}.{table}")).collect()


def fivetran_case(session, project: Path, versions: int, events: int, repeat: int, seed: int) -> list[dict]:
    """A batch of events onto `versions` versions: fivetran_history against the hand-written job."""
    generate_fivetran(session, versions // 4, 4, events, seed)
    session.sql(f"create or replace table {SCHEMA}.fivetran_pyspark using delta as select * from {SCHEMA}.fivetran_bench")
    at = "2026-01-02 00:00:00"
    facts = {"versions": versions, "events": events}
    results = [
        timed_load(session, "fivetran_history", f"{SCHEMA}.fivetran_bench",
                   lambda: dbt_load(project, "fivetran_bench", "fivetran_batch", at), repeat, **facts),
        timed_load(session, "pyspark_fivetran", f"{SCHEMA}.fivetran_pyspark",
                   lambda: pyspark_fivetran(session, f"{SCHEMA}.fivetran_pyspark", f"{SCHEMA}.fivetran_batch", at, "unmod"),
                   repeat, **facts),
    ]
    assert_same_history(["fivetran_bench", "fivetran_pyspark"], query_signature(session,
                        "select id, a0, a1, _fivetran_start, _fivetran_end, _fivetran_active from {table} "
                        "order by id, _fivetran_start"), facts)
    return results


def type6_case(session, project: Path, keys: int, repeat: int, seed: int) -> list[dict]:
    """One load with 10% Type 2 and 10% Type 1 changes: scd_type6 against the hand-written job."""
    generate_type6(session, keys, 0.10, 0.10, seed)
    first, second = "2026-01-01 00:00:00", "2026-01-02 00:00:00"
    table = f"{SCHEMA}.type6_pyspark"
    for name in ("type6_bench", "type6_pyspark"):
        session.sql(f"drop table if exists {SCHEMA}.{name}")
    dbt_load(project, "type6_bench", "type6_1", first)
    pyspark_type6(session, table, f"{SCHEMA}.type6_1", first)
    facts = {"keys": keys, "type2_changed": 0.10, "type1_changed": 0.10}
    results = [
        timed_load(session, "scd_type6", f"{SCHEMA}.type6_bench",
                   lambda: dbt_load(project, "type6_bench", "type6_2", second), repeat, **facts),
        timed_load(session, "pyspark_type6", table,
                   lambda: pyspark_type6(session, table, f"{SCHEMA}.type6_2", second), repeat, **facts),
    ]
    assert_same_history(["type6_bench", "type6_pyspark"], query_signature(session,
                        "select id, version, created_on, display_name, tier, score, region, current_flag, "
                        "effective_from, effective_to, change_reason from {table} order by id, version"), facts)
    return results


def numbers(text: str, kind=float) -> list:
    return [kind(part) for part in text.split(",") if part]


def summarize(results: list[dict]) -> dict:
    """The targets' ratios, on the largest N at depth 1 and 10% changed, and the
    depth and no-change cases."""
    def seconds(contender, **case):
        found = [r["seconds_median"] for r in results
                 if r["contender"] == contender and all(r.get(k) == v for k, v in case.items())]
        return found[0] if found else None

    def ratio(a, b):
        return round(a / b, 2) if a and b else None

    size = [r for r in results if r.get("series") == "size"]
    if not size:
        return {}
    n = max(r["keys"] for r in size)
    main_case = {"series": "size", "keys": n}
    merge = seconds("scd2_hist_merge", **main_case)
    summary = {
        "keys": n,
        "snapshot_over_scd2_hist": ratio(seconds("dbt_snapshot", **main_case), merge),
        "scd2_hist_over_pyspark": ratio(merge, seconds("pyspark_two_pass", **main_case)),
        "scd2_hist_over_lower_bound": ratio(merge, seconds("lower_bound", **main_case)),
        "scd2_hist_dv_over_scd2_hist": ratio(seconds("scd2_hist_merge_dv", **main_case), merge),
    }
    depths = sorted({r["depth"] for r in results if r.get("series") == "depth"})
    if depths:
        summary["depth_range"] = [depths[0], depths[-1]]
        summary["deepest_over_shallowest"] = ratio(seconds("scd2_hist_merge", series="depth", depth=depths[-1]),
                                                   seconds("scd2_hist_merge", series="depth", depth=depths[0]))
    unchanged = [r for r in results if r.get("series") == "rate" and r["changed"] == 0]
    if unchanged:
        summary["no_change_commits"] = next(r["commits"] for r in unchanged if r["contender"] == "scd2_hist_merge")
        summary["no_change_over_lower_bound"] = ratio(seconds("scd2_hist_merge", series="rate", changed=0.0),
                                                      seconds("lower_bound", series="rate", changed=0.0))
    return summary


def markdown_table(results: list[dict]) -> str:
    """The results as the README's table."""
    lines = ["| series | contender | load | median s (min-max) | commits | files +/- | rows written |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        if "versions" in r:
            load = f"{r['events']:,} events onto {r['versions']:,} versions"
        elif "type2_changed" in r:
            load = f"N={r['keys']:,}, {r['type2_changed']:.0%} Type 2 and {r['type1_changed']:.0%} Type 1 changes"
        else:
            load = (f"N={r['keys']:,}, depth {r['depth']}, {r['changed']:.0%} changed, {r['deleted']:.0%} deleted, "
                    f"{r['new']:.0%} new")
        lines.append(f"| {r['series']} | {r['contender']} | {load} | {r['seconds_median']:.2f} "
                     f"({r['seconds_min']:.2f}-{r['seconds_max']:.2f}) | {r['commits']} | "
                     f"{r['files_added']}/{r['files_removed']} | {r['rows_written']:,} |")
    return "\n".join(lines)


def chart(results: list[dict], path: Path) -> None:
    """Time against N (one line per contender), and against the change rate."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (by_size, by_rate) = plt.subplots(1, 2, figsize=(12, 4.5))
    # one colour per contender in both charts
    colours = {name: f"C{i}" for i, name in enumerate(dict.fromkeys(r["contender"] for r in results))}
    for series, axis, x in (("size", by_size, "keys"), ("rate", by_rate, "changed")):
        rows = [r for r in results if r.get("series") == series]
        for contender in dict.fromkeys(r["contender"] for r in rows):
            points = sorted((r[x], r["seconds_median"]) for r in rows if r["contender"] == contender)
            axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=contender,
                      color=colours[contender])
        axis.set_ylabel("wall time of the load, s (median)")
        axis.grid(True, alpha=0.3)
    by_size.set_xscale("log")
    by_size.set_yscale("log")
    by_size.set_xlabel("keys (N); 10% changed, 1% deleted, 1% new; depth 1")
    by_size.set_title("one load against N")
    by_rate.set_xlabel("fraction of keys changed (1% deleted and 1% new when > 0)")
    by_rate.set_title("one load against the change rate")
    by_size.legend(fontsize=8)
    by_rate.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, one repetition, three contenders, no depth series: checks the harness runs")
    parser.add_argument("--keys", default="10000,100000,1000000", help="N of the size series")
    parser.add_argument("--series-keys", type=int, default=100_000, help="N of the depth and change-rate series")
    parser.add_argument("--depths", default="1,5,20")
    parser.add_argument("--rates", default="0,0.01,0.1,0.5")
    parser.add_argument("--attributes", type=int, default=6)
    parser.add_argument("--fivetran-versions", type=int, default=1_000_000)
    parser.add_argument("--fivetran-events", type=int, default=100_000)
    parser.add_argument("--type6-keys", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--output", type=Path, default=dbt.ROOT / "bench" / "results.json")
    parser.add_argument("--table", type=Path, help="only print this results file as a Markdown table, and its chart")
    args = parser.parse_args(argv)
    if args.table:
        saved = json.loads(args.table.read_text())
        print(markdown_table(saved["results"]))
        print("\nsummary: " + json.dumps(saved["summary"]))
        chart(saved["results"], args.table.with_suffix(".png"))
        return 0
    if args.quick:
        args.keys, args.series_keys, args.depths, args.rates, args.repeat = "1000", 1000, "", "0", 1
        args.fivetran_versions, args.fivetran_events, args.type6_keys = 400, 100, 1000
        if args.output == dbt.ROOT / "bench" / "results.json":
            args.output = dbt.ROOT / "bench" / "results" / "tmp" / "quick.json"

    dbt.environment()
    os.environ["HISTORIZE_SCHEMA"] = SCHEMA
    project = dbt.package_project(Path(tempfile.mkdtemp(prefix="historize-bench-")), PROJECT_YML)
    for name, sql in MODELS.items():
        (project / "models" / f"{name}.sql").write_text(sql)
    (project / "models" / "bench.yml").write_text(FIVETRAN_YML)
    (project / "snapshots").mkdir(exist_ok=True)
    (project / "snapshots" / "dbt_snapshot.sql").write_text(SNAPSHOT)
    dbt.run(["debug", "--quiet"], project_dir=project)
    session = dbt.spark()
    session.sql(f"drop schema if exists {SCHEMA} cascade")
    session.sql(f"create schema {SCHEMA}")

    results: list[dict] = []
    args.output.parent.mkdir(parents=True, exist_ok=True)

    def keep(found: list[dict], series: str) -> None:
        """Adds a case's results, and saves all so far (a long run keeps what it measured)."""
        results.extend({"series": series, **r} for r in found)
        args.output.write_text(json.dumps({"summary": summarize(results), "results": results}, indent=2) + "\n")

    common = {"attributes": args.attributes, "repeat": args.repeat, "seed": args.seed}
    for keys in numbers(args.keys, int):
        keep(scd2_case(session, project, keys, depth=1, changed=0.10, deleted=0.01, new=0.01,
                       contenders=QUICK_CONTENDERS if args.quick else SCD2_CONTENDERS, **common), "size")
    for depth in numbers(args.depths, int):
        keep(scd2_case(session, project, args.series_keys, depth=depth, changed=0.10, deleted=0.01, new=0.01,
                       contenders=("scd2_hist_merge", "pyspark_two_pass"), **common), "depth")
    for rate in numbers(args.rates):
        other = 0.01 if rate > 0 else 0.0
        keep(scd2_case(session, project, args.series_keys, depth=1, changed=rate, deleted=other, new=other,
                       contenders=("scd2_hist_merge", "dbt_snapshot", "pyspark_two_pass"), **common), "rate")

    keep(fivetran_case(session, project, args.fivetran_versions, args.fivetran_events, args.repeat, args.seed),
         "fivetran")
    keep(type6_case(session, project, args.type6_keys, args.repeat, args.seed), "scd_type6")

    print("bench: summary " + json.dumps(summarize(results)), flush=True)
    chart(results, args.output.with_suffix(".png"))
    print(f"bench: wrote {args.output} and {args.output.with_suffix('.png')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
