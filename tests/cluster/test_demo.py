"""The demo's four loads on the cluster, built as ./scripts/demo.sh builds them
(CI builds them on the embedded Spark too, checked against the same tables):
they end in tests/demo_tables.txt even when the Thrift server is killed in the
middle of a load and the load rerun; their log holds no deprecation warning;
the SQL the materializations generated and the invariant tests and
point-in-time models the demo compiled pass the project's sqlfluff rules
(.sqlfluff, sparksql)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from historize_tools import cluster, demo
from historize_tools import dbt_runner as dbt

from projects import DEMO_TABLES, on_cluster
from sql_lint import lint

SCHEMA = "tdemo"
HISTORY_MODELS = ("rc_aw_product_hist", "fivetran_orders_history", "dim_program", "dim_player")
# Statements dbt itself issues while a history model runs (its relation and column lookups),
# and the session settings around a write (Spark's configuration keys are case-sensitive).
NOT_GENERATED = ("describe table extended", "show table extended", "show tblproperties", "describe history",
                 "set spark.", "reset spark.")


class KillServerAfter:
    """A dbt callback that kills the Thrift server (SIGKILL, its whole process
    group) once `node` has run a statement starting with `after`, as the node's
    next statement is sent: that statement and the rest of the load never run."""

    def __init__(self, settings: cluster.Settings, node: str, after: str) -> None:
        self.settings, self.node, self.after = settings, node, after
        self.seen = self.killed = False

    def __call__(self, event) -> None:
        if self.killed or event.info.name != "SQLQuery" or not event.data.node_info.unique_id.endswith("." + self.node):
            return
        statement = event.data.sql.split("*/", 1)[-1].strip().lower()
        if self.seen:
            pid = int(self.settings.pid_file("thrift").read_text())
            os.killpg(pid, signal.SIGKILL)
            while cluster.group_running(self.settings, "thrift"):  # until its port is free
                time.sleep(0.1)
            self.killed = True
        elif statement.startswith(self.after):
            self.seen = True


@dataclass
class DemoRun:
    """What the demo's loads on the cluster left: the SQL they ran, the killed run, the tables."""
    recorder: dbt.EventRecorder = field(default_factory=dbt.EventRecorder)
    compiled: Path = Path()
    killed: bool = False
    killed_run_failed: bool = False
    killed_run_messages: str = ""
    killed_run_log: str = ""
    tables: str = ""


@pytest.fixture(scope="module")
def demo_run(running_cluster) -> DemoRun:
    found = DemoRun(compiled=running_cluster.home / "dbt" / "target" / "compiled" / "historize" / "models")
    with on_cluster(running_cluster, SCHEMA):
        demo.reset()
        seconds = []
        for load in demo.LOADS:
            began = time.monotonic()
            if load["demo_load"] == 2:
                # the server dies right after the product history's MERGE committed
                killer = KillServerAfter(running_cluster, "rc_aw_product_hist", "merge into")
                logged: list[str] = []
                failed = demo.build(load, expect_success=False,
                                    callbacks=[killer, found.recorder, lambda event: logged.append(event.info.msg)])
                found.killed, found.killed_run_failed = killer.killed, not failed.success
                found.killed_run_messages, found.killed_run_log = dbt.failure_messages(failed), "\n".join(logged)
                restarted = cluster.start(running_cluster)
                print(f"thrift server restarted in {restarted:.1f} s")
            demo.build(load, callbacks=[found.recorder])  # every model and test of the load passes, or this raises
            seconds.append(time.monotonic() - began)
        found.tables = demo.tables_text(SCHEMA)
        print(f"demo loads on the cluster: {', '.join(f'{s:.1f} s' for s in seconds)}")
        yield found
        demo.reset()


def test_the_demo_on_the_cluster_ends_in_the_expected_tables(demo_run, running_cluster):
    assert demo_run.killed and demo_run.killed_run_failed
    # dbt-spark's summary says "unexpected exception" for the statement the server
    # died in (models running beside it fail to connect); its log says what happened
    assert "rc_aw_product_hist: unexpected exception" in demo_run.killed_run_messages.splitlines()
    assert "Connection lost during query execution" in demo_run.killed_run_log, demo_run.killed_run_log
    assert (f"Could not connect to any of [('{cluster.HOST}', {running_cluster.thrift_port})]"
            in demo_run.killed_run_log), demo_run.killed_run_log
    # Load 2's record is its rerun's, which found the killed run's MERGE committed and wrote nothing.
    assert demo_run.tables == with_ledger_row(DEMO_TABLES.read_text(), (
        "rc_aw_product_hist", "2026-02-01 06:00:00", "demo-load-2", "nothing to write", "0", "0", "0"))


def with_ledger_row(tables: str, replacement: tuple) -> str:
    """The demo's tables with the load ledger's row of the same load_run_id replaced (laid out again)."""
    heading = "\n== historize_demo.historize_loads\n"
    before, ledger = tables.split(heading)
    lines = [line for line in ledger.splitlines() if line.startswith("|")]
    names, *rows = [tuple(cell.strip() for cell in line.strip("|").split("|")) for line in lines]
    assert any(row[2] == replacement[2] for row in rows), (rows, replacement)
    return before + heading + demo.text_table(list(names), [replacement if row[2] == replacement[2] else row
                                                             for row in rows])


def test_demo_loads_raise_no_deprecation_warning(demo_run):
    assert demo_run.recorder.statements, "the recorder saw no statement: it records nothing"
    assert demo_run.recorder.warnings == []


def generated_statements(recorder: dbt.EventRecorder) -> dict[str, str]:
    """The distinct statements the history models ran that historize wrote, by a
    short name; also written to target/generated_sql/ for a look or a lint by hand.
    Statements that differ only in their strings and numbers (a guard's version, an
    instant) are one: the rules read neither."""
    found: dict[str, tuple[str, str]] = {}
    for node, sql in recorder.statements:
        name = node.rsplit(".", 1)[-1]
        body = re.sub(r"^\s*/\*.*?\*/\s*", "", sql, flags=re.S).strip()
        if name in HISTORY_MODELS and not body.lower().startswith(NOT_GENERATED):
            shape = re.sub(r"\b\d+\b", "0", re.sub(r"'(?:[^'\\]|\\.)*'", "''", " ".join(body.split())))
            found.setdefault(shape, (f"{name}_{len(found):02d}", body + "\n"))
    out = dbt.ROOT / "target" / "generated_sql"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name, body in found.values():
        (out / f"{name}.sql").write_text(body)
    return dict(found.values())


def test_generated_sql_passes_lint(demo_run):
    statements = generated_statements(demo_run.recorder)
    kinds = {sql.split()[0].lower() for sql in statements.values()}
    assert {"merge", "create", "alter", "cache"} <= kinds, kinds
    problems = {name: found for name, sql in statements.items() if (found := lint(sql, generated=True))}
    assert problems == {}


def test_compiled_invariant_tests_pass_lint(demo_run):
    tests = [p for p in demo_run.compiled.rglob("*.sql") if re.match(
        r"historize_(one_open_version|no_overlapping_versions|no_gaps|open_version_unbounded)_", p.name)]
    assert len(tests) >= 4
    problems = {p.name: found for p in tests if (found := lint(p.read_text(), generated=True))}
    assert problems == {}


def test_compiled_point_in_time_models_pass_lint(demo_run):
    # sqlfluff's dbt templater compiles models before any table exists, and these
    # models read their history table's properties while compiling: they are
    # linted here, as the demo compiled them.
    models = ["product_as_of_mid_february", "product_changes_since_first_load", "sales_with_product_price"]
    problems = {name: found for name in models
                if (found := lint((demo_run.compiled / "demo" / f"{name}.sql").read_text(), generated=True))}
    assert problems == {}
