"""Deterministic inputs: snapshots of N keys, Fivetran batches, Type 6 snapshots."""
from __future__ import annotations

from historize_tools.bench import SCHEMA


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


# A key's fate in a snapshot made at version `base`: a hash of the key, so that every
# contender sees the same data (make_snapshot; a change as events picks the same keys).
FATE = "abs(xxhash64(id, {seed}, {base}, 'fate')) % 1000000 / 1000000.0"


def make_snapshot(session, name: str, keys: int, attributes: int, seed: int, base: int = 0,
                  changed: float = 0.0, deleted: float = 0.0, new: float = 0.0) -> None:
    """A snapshot of N keys at version `base`, of which the given fractions are
    deleted or changed (version base + 1), plus new keys (FATE picks them)."""
    fate = FATE.format(seed=seed, base=base)
    version = f"case when {fate} < {deleted + changed} then {base + 1} else {base} end"
    session.sql(f"""
        create or replace table {SCHEMA}.{name} using delta as
        select id, {attribute_columns(attributes, seed, version)}
        from range({keys})
        where {fate} >= {deleted}
        union all
        select id, {attribute_columns(attributes, seed, '0')} from range({keys}, {keys + int(keys * new)})
    """)


def make_daily_snapshot(session, name: str, keys: int, attributes: int, seed: int, day: int) -> None:
    """Day `day` of a daily series: on each day a tenth of the keys change (a key's
    version counts its changes so far), a hundredth are absent (back the next day),
    and N / 100 new keys arrive."""
    changes = " + ".join(f"case when abs(xxhash64(id, {seed}, {d}, 'change')) % 10 = 0 then 1 else 0 end"
                         for d in range(1, day + 1)) or "0"
    session.sql(f"""
        create or replace table {SCHEMA}.{name} using delta as
        select id, {attribute_columns(attributes, seed, changes)}
        from range({keys + keys // 100 * day})
        where abs(xxhash64(id, {seed}, {day}, 'absent')) % 100 <> 0
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


def make_dbt_snapshot(session, name: str, snapshots: list[str], times: list[str]) -> None:
    """The table dbt's snapshot (check strategy) leaves after loading `snapshots` at
    `times`, when every key changes in each (as build_history's snapshots do): each row
    of snapshot v a version from times[v] to times[v + 1], the last one open. Laid out as
    dbt's MERGE leaves it: each file holds its keys' versions, open and closed together (the
    MERGE of each load rewrites every file, every key having changed), so that a later load
    finds the keys it changes in every file, as it would there."""
    parts = []
    for number, (snapshot, at) in enumerate(zip(snapshots, times)):
        end = f"timestamp'{times[number + 1]}'" if number + 1 < len(times) else "cast(null as timestamp)"
        parts.append(f"select *, md5(concat(cast(id as string), '|', '{at}')) as dbt_scd_id, "
                     f"timestamp'{at}' as dbt_updated_at, timestamp'{at}' as dbt_valid_from, {end} as dbt_valid_to "
                     f"from {SCHEMA}.{snapshot}")
    session.sql(f"create or replace table {SCHEMA}.{name} using delta as "
                f"select * from ({' union all '.join(parts)}) as versions distribute by id")
