"""The measured cases: an SCD2 load, a Fivetran batch, a Type 6 load."""
from __future__ import annotations

import json
from pathlib import Path

from historize_tools.bench import SCHEMA
from historize_tools.bench.contenders import dbt_load, load_into, lower_bound, pyspark_fivetran, pyspark_type6
from historize_tools.bench.data import generate_fivetran, generate_type6, make_snapshot
from historize_tools.bench.measure import (assert_same_history, delta_version, history_signature, query_signature, timed,
                                           timed_load, writes_since)


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
