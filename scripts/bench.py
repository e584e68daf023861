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
import statistics
import sys
import tempfile
import time
from pathlib import Path

import dbt_inprocess as dbt

SCHEMA = "historize_bench"
PROJECT_YML = """\
name: bench
version: "1.0"
config-version: 2
profile: historize
model-paths: ["models"]
models:
  +file_format: delta
  historize:
    +enabled: false
seeds:
  historize:
    +enabled: false
"""


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--attributes", type=int, default=6)
    parser.add_argument("--changed", type=float, default=0.10)
    parser.add_argument("--deleted", type=float, default=0.01)
    parser.add_argument("--new", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--output", type=Path, default=dbt.ROOT / "bench" / "results.json")
    args = parser.parse_args(argv)

    dbt.environment()
    project = Path(tempfile.mkdtemp(prefix="historize-bench-"))
    (project / "dbt_packages").mkdir()
    (project / "dbt_packages" / "historize").symlink_to(dbt.ROOT)
    (project / "dbt_project.yml").write_text(PROJECT_YML)
    (project / "models").mkdir()
    contenders = {f"scd2_hist_{s}": s for s in ("merge", "ordered")}
    for name, strategy in contenders.items():
        (project / "models" / f"{name}.sql").write_text(
            f"{{{{ config(materialized='scd2_hist', unique_key='id', strategy='{strategy}') }}}}\n"
            f"select * from {SCHEMA}.{{{{ var('snapshot') }}}}\n"
        )
    import os
    os.environ["HISTORIZE_SCHEMA"] = SCHEMA
    dbt.run(["debug", "--quiet"], project_dir=project)
    session = dbt.spark()
    session.sql(f"drop schema if exists {SCHEMA} cascade")
    generate(session, args.keys, args.attributes, args.changed, args.deleted, args.new, args.seed)

    results = []
    for name in contenders:
        table = f"{SCHEMA}.{name}"
        run_model(project, name, "snapshot_1", "2026-01-01 00:00:00")
        base = delta_version(session, table)
        times, commits, written = [], [], []
        for _ in range(args.repeat):
            session.sql(f"restore table {table} to version as of {base}")
            before = delta_version(session, table)
            times.append(run_model(project, name, "snapshot_2", "2026-01-02 00:00:00"))
            commits.append(delta_version(session, table) - before)
            written.append(rows_written(session, table, before))
        result = {
            "contender": name, "keys": args.keys, "attributes": args.attributes, "changed": args.changed,
            "deleted": args.deleted, "new": args.new, "seconds_median": statistics.median(times),
            "seconds_min": min(times), "seconds_max": max(times), "commits": commits[-1], "rows_written": written[-1],
        }
        results.append(result)
        print(json.dumps(result), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
