"""A load killed after each of its statements (tests/functional/test_kill_and_rerun.py, the
events loads' and the adoption's tests): a probe of the tables after every statement, and
the tables it reads."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from historize_tools import dbt_runner as dbt

class StatementProbe:
    """A dbt callback on `node`'s statements: after each one completes it reads
    `probe()` (the tables and their versions); with `kill`, it fails the run
    right after the first statement that changed them, unless that statement
    is `repeat` (the one the previous run was killed after, made again)."""

    def __init__(self, node: str, probe, kill: bool = False, repeat: str | None = None) -> None:
        self.node, self.probe, self.kill, self.repeat = node, probe, kill, repeat
        self.probes: list = []
        self.sql = self.killed_after = None

    def __call__(self, event) -> None:
        if event.info.name not in ("SQLQuery", "SQLQueryStatus") or not event.data.node_info.unique_id.endswith(
                "." + self.node):
            return
        if event.info.name == "SQLQuery":
            self.sql = " ".join(event.data.sql.split())
        if event.info.name != "SQLQueryStatus":
            return
        if not self.probes:
            self.probes.append(self.start)
        self.probes.append(self.probe())
        if self.kill and self.probes[-1] != self.probes[-2] and self.sql != self.repeat:
            self.killed_after = self.sql
            raise RuntimeError(f"injected failure after statement {len(self.probes) - 1}")

    def started(self) -> "StatementProbe":
        self.start = self.probe()
        return self

    def writes(self) -> list[int]:
        """The statements (1-based) after which the tables or their versions had changed."""
        return [number for number in range(1, len(self.probes)) if self.probes[number] != self.probes[number - 1]]


def kill_after_each_write(node: str, probe, writing: list[int], run: Callable, check: Callable) -> list[int]:
    """Kills a load right after its first write, its rerun right after its own first write (a
    write the run before was killed after, made again, is passed over), and so on, until a
    rerun completes, which must write nothing. `run(callbacks)` runs the load, expecting it may
    fail; `check(kills)` runs after each kill. Returns the statements killed after, a run each."""
    kills, repeat = [], None
    for _ in range(2 * len(writing) + 1):
        killer = StatementProbe(node, probe, kill=True, repeat=repeat).started()
        result = run([killer])
        if result.success:
            assert killer.writes() == []  # the load is complete: its rerun writes nothing
            return kills
        kills.append(len(killer.probes) - 1)
        repeat = killer.killed_after
        assert f"injected failure after statement {kills[-1]}" in dbt.failure_messages(result)
        check(kills)
    raise AssertionError(f"the load never completed: killed after statements {kills}")


def tables_and_versions(schema_dir: Path) -> tuple:
    """The schema's tables (not session views, which have no folder) and the Delta
    version of each: its newest commit file. Read from the warehouse's folders
    rather than the catalog: it runs after every statement of every load, from
    dbt's threads (a callback), and a folder listing costs a millisecond where a
    query costs a hundred."""
    found = []
    for table in sorted(path for path in schema_dir.iterdir() if path.name != "snapshot"):
        commits = [int(name.stem) for name in (table / "_delta_log").glob("*.json") if name.stem.isdigit()]
        if commits:
            found.append((table.name, max(commits)))
    return tuple(found)


def schema_folder(project) -> Path:
    """The schema's folder in the warehouse (the tests' in-memory catalog keeps each
    managed table in a folder named after it, moved by a rename)."""
    warehouse = dbt.spark().conf.get("spark.sql.warehouse.dir")
    return Path(warehouse.removeprefix("file:")) / f"{project.schema}.db"


class WriteBeforeMerge:
    """A dbt callback on `node`'s statements: right before its first MERGE is sent, another
    writer runs `sql` on `session` (a SparkSession object, usable from dbt's threads), and
    `committed` gets `table`'s Delta version after that write: what a concurrency test needs
    to show the other commit landed between the load's reads and its MERGE."""

    def __init__(self, node: str, session, table: str, sql: str) -> None:
        self.node, self.session, self.table, self.sql = node, session, table, sql
        self.committed: list[int] = []

    def __call__(self, event) -> None:
        if (event.info.name == "SQLQuery" and event.data.node_info.unique_id.endswith("." + self.node)
                and not self.committed and event.data.sql.split("*/", 1)[-1].split()[:2] == ["merge", "into"]):
            self.session.sql(self.sql)
            self.committed.append(self.session.sql(f"describe history {self.table} limit 1").collect()[0]["version"])
