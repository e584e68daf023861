"""The dbt-checkpoint checks CI runs really fail on models that break them."""
from __future__ import annotations

import textwrap

from historize_tools import checks as dbt_checks
from historize_tools import dbt_runner as dbt

from projects import PROJECT_YML


def make_project(path, models: dict[str, str], yml: str):
    dbt.package_project(path, PROJECT_YML)
    for name, sql in models.items():
        (path / "models" / f"{name}.sql").write_text(sql)
    (path / "models" / "_models.yml").write_text(textwrap.dedent(yml))


def test_checks_pass_on_a_documented_project(tmp_path, capsys):
    make_project(tmp_path, {"base": "select 1 as id", "base_hist": "{{ config(materialized='scd2_hist', unique_key='id') }} select 1 as id"}, """
        version: 2
        models:
          - name: base
            description: A base.
            meta: {lineage: {upstream: []}}
            columns: [{name: id, description: The id.}]
          - name: base_hist
            description: Its history.
            meta: {lineage: {upstream: [base]}, former_names: []}
            columns: [{name: id, description: The id.}]
        """)
    assert dbt_checks.main(tmp_path) == 0


def test_checks_fail_on_missing_descriptions_and_meta_keys(tmp_path, capsys):
    make_project(tmp_path, {"base": "select 1 as id", "base_hist": "{{ config(materialized='scd2_hist', unique_key='id') }} select 1 as id"}, """
        version: 2
        models:
          - name: base
            meta: {lineage: {upstream: []}}
            columns: [{name: id}]
          - name: base_hist
            description: Its history.
            meta: {lineage: {upstream: [base]}}
            columns: [{name: id, description: The id.}]
        """)
    assert dbt_checks.main(tmp_path) == 1
    out = capsys.readouterr().out
    assert "check-model-has-description: FAILED" in out
    assert "check-model-columns-have-desc: FAILED" in out
    assert "models/base_hist.sql: meta lacks former_names" in out
    assert "check-model-has-meta-keys: FAILED (2 models)" in out
