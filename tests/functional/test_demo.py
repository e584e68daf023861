"""The demo's four loads, built as ./scripts/demo.sh builds them: their log holds
no deprecation warning, the product history is the one the README shows, and
the SQL the materializations generated and the invariant tests the demo
compiled pass the project's sqlfluff rules (.sqlfluff, sparksql)."""
from __future__ import annotations

import re
import shutil

from sqlfluff.core import FluffConfig, Linter

from historize_tools import demo
from historize_tools import dbt_runner as dbt

from conftest import DEMO_SCHEMA as SCHEMA
from conftest import DEMO_TABLES

HISTORY_MODELS = ("rc_aw_product_hist", "fivetran_orders_history", "dim_program", "dim_player")
# Statements dbt itself issues while a history model runs (its relation and column lookups),
# and the session settings around a write (Spark's configuration keys are case-sensitive).
NOT_GENERATED = ("describe table extended", "show table extended", "show tblproperties", "describe history",
                 "set spark.", "reset spark.")


def readme_block(title: str) -> str:
    """The table the README shows under `== title` in its demo output."""
    text = (dbt.ROOT / "README.md").read_text()
    block = re.search(rf"== {re.escape(title)}\n(\+[-+]+\+\n(?:[|+].*\n)+)", text)
    assert block, f"the README shows no table {title}"
    return block.group(1)


# Rules the SQL historize generates (materializations, compiled invariant tests)
# breaks on purpose, on top of the project's exclusions.
GENERATED_SQL_EXCLUDED = {
    "RF06": "every identifier is quoted, so that any column name works",
    "ST05": "MERGE sources and plan queries are subqueries: Spark does not substitute a cached view read in a CTE",
}


def lint(sql: str, generated: bool = False) -> list[str]:
    """sqlfluff's violations of one statement, with the project's rules."""
    overrides = {"templater": "raw", "dialect": "sparksql"}
    if generated:
        excluded = FluffConfig.from_path(str(dbt.ROOT)).get("exclude_rules")
        overrides["exclude_rules"] = ",".join([excluded, *GENERATED_SQL_EXCLUDED])
    config = FluffConfig.from_path(str(dbt.ROOT), overrides=overrides)
    found = Linter(config=config).lint_string(sql).get_violations()
    return [f"{v.rule_code()} line {v.line_no}: {v.desc()}" for v in found]


def generated_statements(recorder: dbt.EventRecorder) -> dict[str, str]:
    """The distinct statements the history models ran that historize wrote, by a
    short name; also written to target/generated_sql/ for a look or a lint by hand."""
    found: dict[str, tuple[str, str]] = {}
    for node, sql in recorder.statements:
        name = node.rsplit(".", 1)[-1]
        body = re.sub(r"^\s*/\*.*?\*/\s*", "", sql, flags=re.S).strip()
        if name in HISTORY_MODELS and not body.lower().startswith(NOT_GENERATED):
            found.setdefault(" ".join(body.split()), (f"{name}_{len(found):02d}", body + "\n"))
    out = dbt.ROOT / "target" / "generated_sql"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name, body in found.values():
        (out / f"{name}.sql").write_text(body)
    return dict(found.values())


def test_demo_loads_raise_no_deprecation_warning(demo_run):
    assert demo_run.statements, "the recorder saw no statement: it records nothing"
    assert demo_run.warnings == []


def test_demo_product_history_is_the_readme_s(demo_run):
    table = demo.EVOLVED.replace("historize_demo.", f"{SCHEMA}_demo.")
    shown = demo.table_text(table, demo.SHOWN[demo.EVOLVED], demo.ORDER[demo.EVOLVED])
    assert shown == readme_block(demo.EVOLVED)
    # the demo's own layout is Spark's
    frame = dbt.spark().sql(f"select {demo.SHOWN[demo.EVOLVED]} from {table} order by {demo.ORDER[demo.EVOLVED]}")
    assert frame._jdf.showString(50, 0, False) == shown
    ledger = "historize_demo.historize_loads"
    assert demo.table_text(ledger.replace("historize_demo.", f"{SCHEMA}_demo."), demo.SHOWN[ledger],
                           demo.ORDER[ledger]) == readme_block(ledger)


def test_demo_tables_are_the_expected_ones(demo_run):
    # the tables the cluster's demo must end in too (tests/cluster/test_cluster.py)
    assert demo.tables_text(SCHEMA) == DEMO_TABLES.read_text()


def test_generated_sql_passes_lint(demo_run):
    statements = generated_statements(demo_run)
    kinds = {sql.split()[0].lower() for sql in statements.values()}
    assert {"merge", "create", "alter", "cache"} <= kinds, kinds
    problems = {name: found for name, sql in statements.items() if (found := lint(sql, generated=True))}
    assert problems == {}


def test_compiled_invariant_tests_pass_lint(demo_run):
    compiled = dbt.ROOT / "target" / "compiled" / "historize" / "models"
    tests = [p for p in compiled.rglob("*.sql") if re.match(
        r"historize_(one_open_version|no_overlapping_versions|no_gaps|open_version_unbounded)_", p.name)]
    assert len(tests) >= 4
    problems = {p.name: found for p in tests if (found := lint(p.read_text(), generated=True))}
    assert problems == {}


def test_compiled_point_in_time_models_pass_lint(demo_run):
    # sqlfluff's dbt templater compiles models before any table exists, and these
    # models read their history table's properties while compiling: they are
    # linted here, as the demo compiled them.
    compiled = dbt.ROOT / "target" / "compiled" / "historize" / "models" / "demo"
    models = ["product_as_of_mid_february", "product_changes_since_first_load", "sales_with_product_price"]
    problems = {name: found for name in models if (found := lint((compiled / f"{name}.sql").read_text(), generated=True))}
    assert problems == {}
