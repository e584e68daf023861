"""The contenders: the dbt models (historize and dbt's snapshot) and the
hand-written PySpark jobs they race, and the lower bound."""
from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from historize_tools import dbt_runner as dbt
from historize_tools.bench import SCHEMA
from historize_tools.bench.data import FIVETRAN_TMAX


ATTRIBUTE_HASH = "sha2(to_json(struct({columns})), 256)"


def step(profile, label: str):
    """Times a step of a hand-written job into `profile`, when there is one."""
    return profile.step(label) if profile is not None else nullcontext()


def pyspark_two_pass(session, table: str, snapshot: str, at: str, attributes: list[str], profile=None) -> None:
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
    with step(profile, "change set (localCheckpoint)"):
        changes = changes.localCheckpoint()
    to_close = changes.where("current_hash is not null").select(
        "id", F.when(F.col("row_hash").isNull(), "deleted").otherwise("changed").alias("state"))
    with step(profile, "merge (close)"):
        (DeltaTable.forName(session, table).alias("t")
            .merge(to_close.alias("s"), "t.id = s.id and t.version_ended_at is null")
            .whenMatchedUpdate(set={"version_ended_at": loaded_at, "version_state": "s.state"})
            .execute())
    new_versions = changes.where("row_hash is not null").select(
        "id", *attributes, "row_hash", loaded_at.alias("version_started_at"),
        F.lit(None).cast("timestamp").alias("version_ended_at"),
        F.when(F.col("current_hash").isNull(), "new").otherwise("changed").alias("version_state"))
    with step(profile, "append (new versions)"):
        new_versions.write.format("delta").mode("append").saveAsTable(table)


TYPE6_TYPE2 = ["tier", "score", "region"]
TYPE6_END = "timestamp'9999-12-31 23:59:59'"


def pyspark_type6(session, table: str, snapshot: str, at: str, profile=None) -> None:
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
    with step(profile, "change set (localCheckpoint)"):
        changes = joined.where("deleted or opens or type1").localCheckpoint()
    closes = "t.current_flag and (s.deleted or (s.opens and s.current_hash is not null))"
    merge = (DeltaTable.forName(session, table).alias("t")
             .merge(changes.alias("s"), "t.id = s.id")
             .whenMatchedUpdate(condition=f"s.type1 or ({closes})", set={
                 "display_name": "case when s.type1 then s.display_name else t.display_name end",
                 "effective_to": f"case when {closes} then timestamp'{at}' else t.effective_to end",
                 "current_flag": f"case when {closes} then false else t.current_flag end",
                 "change_reason": f"case when {closes} and s.deleted then 'deleted_in_source' else t.change_reason end"}))
    with step(profile, "merge (Type 1, close)"):
        merge.execute()
    new_versions = changes.where("opens").select(
        "id", F.coalesce("first_created_on", "created_on").alias("created_on"), "display_name", *TYPE6_TYPE2,
        "_hash", loaded_at.alias("effective_from"), F.expr(TYPE6_END).alias("effective_to"),
        F.lit(True).alias("current_flag"), (F.coalesce("last_version", F.lit(0)) + 1).alias("version"),
        F.lit("source_load").alias("change_reason"))
    with step(profile, "append (new versions)"):
        new_versions.write.format("delta").mode("append").saveAsTable(table)


def pyspark_fivetran(session, table: str, batch: str, at: str, unmodified: str, profile=None) -> None:
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
    with step(profile, "change set (localCheckpoint)"):
        changes = events.join(latest, "id", "left").where("op <> 'update' or last_start is not null").localCheckpoint()
    merge = (DeltaTable.forName(session, table).alias("t")
             .merge(changes.where("last_start is not null and last_start <= start").alias("s"),
                    "t.id = s.id and t._fivetran_active")
             .whenMatchedUpdate(set={
                 "_fivetran_end": "case when s.op = 'delete' then s.start else s.start - interval 1 millisecond end",
                 "_fivetran_active": "false"}))
    with step(profile, "merge (close)"):
        merge.execute()
    new_versions = changes.where("op <> 'delete'").select(
        "id",
        F.when((F.col("op") == "update") & (F.col("a0") == unmodified), F.col("last_a0")).otherwise(F.col("a0")).alias("a0"),
        F.when((F.col("op") == "update") & (F.col("a1") == unmodified), F.col("last_a1"))
         .otherwise(F.col("a1").cast("bigint")).alias("a1"),
        F.col("start").alias("_fivetran_start"), F.expr(FIVETRAN_TMAX).alias("_fivetran_end"),
        F.lit(True).alias("_fivetran_active"), F.lit(at).cast("timestamp").alias("_fivetran_synced"))
    with step(profile, "append (new versions)"):
        new_versions.write.format("delta").mode("append").saveAsTable(table)


def lower_bound(session, snapshot: str, open_versions_of: str, output: str, attributes: list[str], profile=None) -> None:
    """A plain Spark job: read the snapshot and the open versions once, write only the changed rows."""
    query = f"""
        insert into {output}
        select s.*
        from (select *, {ATTRIBUTE_HASH.format(columns=', '.join(attributes))} as h from {snapshot}) as s
        full outer join (select id, row_hash from {open_versions_of} where version_ended_at is null) as o
            on s.id = o.id
        where s.h is distinct from o.row_hash
    """
    with step(profile, "insert (changed rows)"):
        session.sql(query)


PROJECT_YML = dbt.project_yml("bench")
# Options under meta, where dbt 1.11 wants custom keys.
MODELS = {
    "scd2_hist": "{{ config(materialized='scd2_hist', unique_key='id') }}\n"
                 "select * from historize_bench.{{ var('snapshot') }}\n",
    # a missed day loaded late, against rebuilding the history from every snapshot
    "backfill_hist": "{{ config(materialized='scd2_hist', unique_key='id', meta={'out_of_order': 'reconcile'}) }}\n"
                     "select * from historize_bench.{{ var('snapshot') }}\n",
    # the same model keeping every belief (bitemporal), from snapshots and from change events
    "scd2_hist_bitemporal": "{{ config(materialized='scd2_hist', unique_key='id', meta={'bitemporal': true}) }}\n"
                            "select * from historize_bench.{{ var('snapshot') }}\n",
    "events_bitemporal_hist": "{{ config(materialized='scd2_hist', unique_key='id', meta={'bitemporal': true, "
                              "'input': 'changes', 'sequence_by': 'changed_at'}) }}\n"
                              "select * from historize_bench.{{ var('snapshot') }}\n",
    # the same model with deletion vectors from its first load (at any size), and kept off
    "dv_hist": "{{ config(materialized='scd2_hist', unique_key='id', meta={'deletion_vectors_from_mb': 0}) }}\n"
               "select * from historize_bench.{{ var('snapshot') }}\n",
    "no_dv_hist": "{{ config(materialized='scd2_hist', unique_key='id', "
                  "tblproperties={'delta.enableDeletionVectors': 'false'}) }}\n"
                  "select * from historize_bench.{{ var('snapshot') }}\n",
    "rebuilt_hist": "{{ config(materialized='scd2_hist', unique_key='id') }}\n"
                    "select * from historize_bench.{{ var('snapshot') }}\n",
    # the same history from change events: each load's rows as events at its time
    "events_hist": "{{ config(materialized='scd2_hist', unique_key='id', meta={'input': 'changes', "
                   "'sequence_by': 'changed_at'}) }}\nselect * from historize_bench.{{ var('snapshot') }}\n",
    # the same history from Delta's Change Data Feed of a table kept as the snapshots (cdf_source)
    "cdf_hist": "{{ config(materialized='scd2_hist', unique_key='id', meta={'input': 'changes', "
                "'sequence_by': ['_commit_timestamp', '_commit_version', '_change_order'], "
                "'deleted_when': \"_change_type = 'delete'\"}) }}\n"
                "select * from {{ historize.change_feed(source('bench', 'cdf_source')) }}\n",
    # switching: a snapshot's history taken over (adopt_snapshot, made by make_dbt_snapshot), against a first load
    "adopted_hist": "{{ config(materialized='scd2_hist', unique_key='id', meta={'adopt_from': 'adopt_snapshot'}) }}\n"
                    "select * from historize_bench.{{ var('snapshot') }}\n",
    "first_hist": "{{ config(materialized='scd2_hist', unique_key='id') }}\n"
                  "select * from historize_bench.{{ var('snapshot') }}\n",
    "fivetran_bench": "{{ config(materialized='fivetran_history', unique_key='id', meta={'unmodified_string': 'unmod'}) }}\n"
                      "select * from historize_bench.{{ var('snapshot') }}\n",
    "type6_bench": "{{ config(materialized='scd_type6', unique_key='id', meta={'type0_columns': ['created_on'], "
                   "'type1_columns': ['display_name']}) }}\nselect * from historize_bench.{{ var('snapshot') }}\n",
}
SNAPSHOT = """\
{% snapshot dbt_snapshot %}
{{ config(target_schema='historize_bench', unique_key='id', strategy='check', check_cols='all',
          hard_deletes='invalidate', file_format='delta') }}
select * from historize_bench.{{ var('snapshot') }}
{% endsnapshot %}
"""
# never run: its table is made by make_dbt_snapshot, as dbt's check strategy would leave it
ADOPT_SNAPSHOT = """\
{% snapshot adopt_snapshot %}
{{ config(target_schema='historize_bench', unique_key='id', strategy='check', check_cols='all',
          hard_deletes='invalidate', file_format='delta') }}
select * from historize_bench.{{ var('snapshot') }}
{% endsnapshot %}
"""
INVARIANT_TESTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded")
BENCH_YML = """\
version: 2
sources:
  - name: bench
    schema: historize_bench
    tables:
      - name: cdf_source
models:
  - name: fivetran_bench
    columns:
      - {name: a1, data_type: bigint}
  - name: scd2_hist
    data_tests:
""" + "".join(f"""\
      - historize.{test}:
          name: {test}_all
          config: {{tags: [invariants_all]}}
      - historize.{test}:
          name: {test}_since
          arguments: {{since: "{{{{ var('since', '1900-01-01 00:00:00') }}}}"}}
          config: {{tags: [invariants_since]}}
""" for test in INVARIANT_TESTS)
SCD2_CONTENDERS = ("scd2_hist", "dbt_snapshot", "pyspark_two_pass", "scd2_hist_bitemporal")
# The contenders whose loads append to the load ledger (historize_loads), which a repetition
# puts back with their table: a load the ledger already holds would be a restatement.
LEDGER_CONTENDERS = ("scd2_hist_bitemporal",)
SMALL_MODEL = ("{{{{ config(materialized='scd2_hist', unique_key='id', tags=['small']) }}}}\n"
               "select * from historize_bench.small_{index}_{{{{ var('small_load') }}}}\n")
SMALL_SNAPSHOT = """\
{{% snapshot small_snap_{index} %}}
{{{{ config(target_schema='historize_bench', unique_key='id', strategy='check', check_cols='all',
          hard_deletes='invalidate', file_format='delta', tags=['small']) }}}}
select * from historize_bench.small_{index}_{{{{ var('small_load') }}}}
{{% endsnapshot %}}
"""


def dbt_load(project: Path, name: str, snapshot: str, at: str, profile=None) -> None:
    command = ["snapshot"] if name == "dbt_snapshot" else ["run"]
    dbt.run(command + ["--select", name], project_dir=project,
            variables={"snapshot": snapshot, "load_timestamp": at, "load_run_id": f"{snapshot}@{at}"},
            callbacks=[profile] if profile is not None else ())


def load_into(session, project: Path, name: str, snapshot: str, at: str, attributes: list[str], profile=None) -> None:
    """One load of `snapshot` into contender `name`'s table."""
    if name != "pyspark_two_pass":
        dbt_load(project, name, snapshot, at, profile)
    elif session.catalog.tableExists(f"{SCHEMA}.{name}"):
        pyspark_two_pass(session, f"{SCHEMA}.{name}", f"{SCHEMA}.{snapshot}", at, attributes, profile)
    else:
        session.sql(f"""
            create table {SCHEMA}.{name} using delta
            tblproperties ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')
            as select *, {ATTRIBUTE_HASH.format(columns=', '.join(attributes))} as row_hash,
                timestamp'{at}' as version_started_at, cast(null as timestamp) as version_ended_at, 'new' as version_state
            from {SCHEMA}.{snapshot}
        """)
