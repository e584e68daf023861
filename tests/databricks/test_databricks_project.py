"""A user's project on dbt-databricks (the `databricks` lane, ./scripts/lanes.sh):
historize installed from packages.yml parses as it is (no --no-version-check),
adds nothing to the project, and its materializations are the ones dbt picks on
the databricks adapter. Its point-in-time macros and invariant tests compile on
that adapter: they read the history table's columns and properties while
compiling, which no workspace answers here, so the two introspection calls they
make are answered with what a table scd2_hist built records, and every other
statement fails the test."""
from __future__ import annotations

import textwrap
from pathlib import Path

import agate
import pytest
from dbt.adapters.databricks.column import DatabricksColumn
from dbt.adapters.databricks.impl import DatabricksAdapter
from dbt.cli.main import dbtRunner

from historize_tools import dbt_runner as dbt

PROFILE = """\
my_project:
  target: dev
  outputs:
    dev:
      type: databricks
      host: dbc-00000000-0000.cloud.databricks.com
      http_path: /sql/1.0/warehouses/0000000000000000
      token: no-token
      catalog: main
      schema: analytics
      threads: 1
"""
HISTORY = "`main`.`analytics`.`customers_hist`"
COLUMNS = {"customers_hist_key": "binary", "customer_id": "int", "name": "string", "row_hash": "bigint",
           "version_started_at": "timestamp", "version_ended_at": "timestamp", "version_state": "string",
           "load_run_id": "string", "loaded_at": "timestamp"}
PROPERTIES = {"historize.kind": "scd2_hist", "historize.unique_key": "customer_id",
              "historize.valid_from": "version_started_at", "historize.valid_to": "version_ended_at",
              "delta.enableRowTracking": "true"}
TESTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded")


@pytest.fixture(scope="module")
def user_project(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("databricks_user")
    files = {
        "dbt_project.yml": 'name: my_project\nversion: "1.0"\nconfig-version: 2\nprofile: my_project\n',
        "packages.yml": f"packages:\n  - local: {dbt.ROOT}\n",
        "profiles.yml": PROFILE,
        "models/customers_hist.sql": "{{ config(materialized='scd2_hist', unique_key='customer_id') }}\n"
                                     "select 1 as customer_id, 'Alice' as name\n",
        "models/customers_on_15_january.sql": "select * from ({{ historize.as_of(ref('customers_hist'), "
                                              "\"timestamp'2026-01-15 00:00:00'\") }}) as v\n",
        "models/customers_hist.yml": "models:\n  - name: customers_hist\n    data_tests:\n"
                                     + "".join(f"      - historize.{test}\n" for test in TESTS),
    }
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path


def invoke(project: Path, *args: str, callbacks=()):
    return dbtRunner(callbacks=list(callbacks)).invoke(
        [*args, "--project-dir", str(project), "--profiles-dir", str(project)])


def test_the_package_installs_parses_and_adds_nothing(user_project):
    assert invoke(user_project, "deps").success
    warnings: list[str] = []
    parsed = invoke(user_project, "parse", "--no-partial-parse",
                    callbacks=[lambda e: warnings.append(f"{e.info.name}: {e.info.msg}") if e.info.level == "warn" else None])
    assert parsed.success, parsed.exception
    assert [w for w in warnings if "Deprecation" in w] == []
    manifest = parsed.result
    # a materialization declared for spark is the one dbt finds on databricks (its parent adapter)
    for kind in ("scd2_hist", "scd_type6", "fivetran_history"):
        found = manifest.find_materialization_macro_by_name("my_project", kind, "databricks")
        assert found is not None and found.unique_id == f"macro.historize.materialization_{kind}_spark", kind
    listed = invoke(user_project, "ls", "--resource-type", "all")
    assert sorted(listed.result) == sorted(
        ["my_project.customers_hist", "my_project.customers_on_15_january",
         *(f"my_project.historize_{test}_customers_hist_" for test in TESTS)])


@pytest.fixture
def introspection(monkeypatch) -> list[str]:
    """The two calls the macros make while compiling, answered as a workspace would for
    the table scd2_hist built; any other statement fails. Returns the statements asked."""
    asked: list[str] = []

    def columns(self, relation):
        asked.append(f"columns of {relation}")
        assert str(relation) == HISTORY, relation
        return [DatabricksColumn(column=name, dtype=dtype) for name, dtype in COLUMNS.items()]

    def execute(self, sql, auto_begin=False, fetch=False, limit=None, **kwargs):
        statement = " ".join(sql.split("*/", 1)[-1].split())
        asked.append(statement)
        assert statement == f"show tblproperties {HISTORY}", statement
        return None, agate.Table([list(item) for item in PROPERTIES.items()], ["key", "value"])

    monkeypatch.setattr(DatabricksAdapter, "get_columns_in_relation", columns)
    monkeypatch.setattr(DatabricksAdapter, "execute", execute)
    return asked


def compiled(project: Path, *path: str) -> str:
    return " ".join((project / "target" / "compiled" / "my_project" / "models" / Path(*path)).read_text().split())


def test_point_in_time_models_and_invariant_tests_compile_on_databricks(user_project, introspection):
    assert invoke(user_project, "deps").success
    result = invoke(user_project, "compile", "--no-populate-cache")
    assert result.success, result.exception
    assert compiled(user_project, "customers_on_15_january.sql") == (
        f"select * from ( select v.* from {HISTORY} as v where v.`version_started_at` <= timestamp'2026-01-15 00:00:00' "
        "and (v.version_ended_at is null or timestamp'2026-01-15 00:00:00' < v.`version_ended_at`) ) as v")
    for test in TESTS:
        sql = compiled(user_project, "customers_hist.yml", f"historize_{test}_customers_hist_.sql")
        assert f"from {HISTORY} as v" in sql, (test, sql)
        assert "partition by v.`customer_id` order by v.`version_started_at`" in sql, (test, sql)
    assert compiled(user_project, "customers_hist.yml", "historize_one_open_version_customers_hist_.sql").endswith(
        "violations as ( select `customer_id`, count(*) as open_versions, 'more than one open version' as violation "
        "from versions where _historize_is_open group by `customer_id` having count(*) > 1 ) select * from violations")
    assert set(introspection) == {f"columns of {HISTORY}", f"show tblproperties {HISTORY}"}
