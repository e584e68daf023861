"""Timing loads, counting what they wrote, and checking that every contender
holds the same history."""
from __future__ import annotations

import json
import statistics
import time

from historize_tools.bench import SCHEMA


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
