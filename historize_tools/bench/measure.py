"""Timing loads, counting what they wrote, and checking that every contender
holds the same history."""
from __future__ import annotations

import json
import re
import statistics
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, TypedDict

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


def vacuum(session, *tables: str) -> None:
    """Removes the files of the tables' earlier versions, which no repetition goes back to:
    a large case's builds would otherwise fill the disk."""
    session.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    for table in tables:
        session.sql(f"vacuum {table} retain 0 hours")


def writes_since(session, table: str, since: int) -> dict:
    """Commits after version `since`, and what they wrote."""
    commits = session.sql(f"describe history {table}").where(f"version > {since}").collect()
    totals = {"commits": len(commits), "operations": sorted(c["operation"] for c in commits)}
    for name, keys in WRITE_METRICS.items():
        totals[name] = sum(int((c["operationMetrics"] or {}).get(key, 0)) for c in commits for key in keys)
    return totals


DBT_COMMENT = re.compile(r"^\s*/\*.*?\*/\s*", re.DOTALL)


def statement_label(sql: str) -> str:
    """A statement's first words, without dbt's query comment."""
    return " ".join(DBT_COMMENT.sub("", sql).replace("`", "").split())[:70]


class Profile:
    """Every statement of one load and its wall time. As a dbt callback it
    times each statement from its start to the node's next statement or its
    end (in the embedded session a query runs when its rows are fetched, after
    dbt logs it); `step` times a step of a hand-written job."""

    def __init__(self) -> None:
        self.statements: list[dict] = []
        self._open: dict[str, tuple[str, float]] = {}

    def __call__(self, event) -> None:
        name = event.info.name
        if name not in ("SQLQuery", "NodeFinished"):
            return
        node = event.data.node_info.unique_id
        now = time.perf_counter()
        if node in self._open:
            label, started = self._open.pop(node)
            self.statements.append({"node": node.rsplit(".", 1)[-1], "statement": label,
                                    "seconds": round(now - started, 3)})
        if name == "SQLQuery":
            self._open[node] = (statement_label(event.data.sql), now)

    @contextmanager
    def step(self, label: str):
        started = time.perf_counter()
        yield
        self.statements.append({"node": "job", "statement": label, "seconds": round(time.perf_counter() - started, 3)})


def commit_metrics(session, table: str, since: int) -> list[dict]:
    """Each commit after `since`: its operation and Delta's operation metrics."""
    commits = session.sql(f"describe history {table}").where(f"version > {since}").orderBy("version").collect()
    return [{"operation": c["operation"], **{k: int(v) for k, v in (c["operationMetrics"] or {}).items()}}
            for c in commits]


class Result(TypedDict, total=False):
    """One result of a run, as the results file keeps it: a contender's load in one case
    (its medians, what its last repetition wrote, its profile), or a timed test."""
    series: str
    contender: str
    seconds_median: float
    seconds_min: float
    seconds_max: float
    repeat: int
    # what the last repetition wrote (writes_since)
    commits: int
    operations: list[str]
    rows_written: int
    files_added: int
    files_removed: int
    bytes_added: int
    bytes_removed: int
    profile: dict
    # the case: keys and history of an SCD2 load (size, rate, depth, deep, changes, adopt) ...
    keys: int
    depth: int
    changed: float
    deleted: float
    new: float
    changed_keys: int
    rows: int
    # ... many small models in one run (small_models) ...
    models: int
    threads: int
    statements_per_model: float
    statement_seconds_per_model: float
    # ... a Fivetran batch, a Type 6 load, a day loaded late ...
    versions: int
    events: int
    type2_changed: float
    type1_changed: float
    days: int
    late_day: int
    versions_before: int
    # ... the invariant tests (a timed test, no load)
    scope: str
    table: str
    seconds: float


@dataclass
class Contender:
    """One contender of a race: `reset` puts its table back and returns the
    version the load starts from; `load(profile)` runs the load."""
    name: str
    table: str
    reset: Callable[[], int]
    load: Callable[[Profile], None]
    times: list[float] = field(default_factory=list)


def race(session, contenders: list[Contender], repeat: int, **facts) -> list[Result]:
    """Times every contender's load `repeat` times, interleaved (A B C, A B C,
    ...), so that drift of the machine hits all alike. Returns per contender
    the median, min and max, what the last repetition committed, and its
    profile (statements and commits)."""
    profiles, writes, commits = {}, {}, {}
    for repetition in range(repeat):
        for contender in contenders:
            started_from = contender.reset()
            profile = Profile()
            started = time.perf_counter()
            contender.load(profile)
            contender.times.append(time.perf_counter() - started)
            profiles[contender.name] = profile
            if repetition == repeat - 1:  # what it wrote, before a contender on the same table loads
                writes[contender.name] = writes_since(session, contender.table, started_from)
                commits[contender.name] = commit_metrics(session, contender.table, started_from)
    results = []
    for contender in contenders:
        times = contender.times
        result: Result = {"contender": contender.name, **facts, "seconds_median": statistics.median(times),
                  "seconds_min": min(times), "seconds_max": max(times), "repeat": repeat,
                  **writes[contender.name],
                  "profile": {"statements": profiles[contender.name].statements,
                              "commits": commits[contender.name]}}
        print(json.dumps({k: v for k, v in result.items() if k != "profile"}), flush=True)
        results.append(result)
    return results


def history_signature(session, name: str, attributes: list[str]):
    """What every contender must agree on: each key's versions, in order, and which is open
    (of a bitemporal table, its current belief's)."""
    table = f"{SCHEMA}.{name}"
    columns = session.table(table).columns
    start, end = (("dbt_valid_from", "dbt_valid_to") if "dbt_valid_from" in columns
                  else ("version_started_at", "version_ended_at"))
    believed = "where superseded_at is null" if "superseded_at" in columns else ""
    return session.sql(f"""
        select id, {', '.join(attributes)}, {end} is null as is_open,
            row_number() over (partition by id order by {start}) as version_number
        from {table}
        {believed}
    """)


def assert_same_history(tables: list[str], signature, case: dict) -> None:
    """Fails unless `signature(table)` (a DataFrame) has the same rows for every table, compared
    in Spark (a deep history does not fit in this process): a fast wrong answer cannot win."""
    reference = signature(tables[0]).persist()  # computed once for every comparison
    for table in tables[1:]:
        other = signature(table)
        if not (reference.exceptAll(other).isEmpty() and other.exceptAll(reference).isEmpty()):
            raise SystemExit(f"bench: {table} does not hold the same history as {tables[0]} ({case})")
    reference.unpersist()
    print(f"bench: {', '.join(tables)} hold the same history", flush=True)


def query_signature(session, query: str):
    """A signature: the rows of `query`, formatted with the table's name."""
    return lambda table: session.sql(query.format(table=f"{SCHEMA}.{table}"))
