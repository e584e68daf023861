"""The SQL scd2_hist generates, rendered by `dbt compile` (no Spark session, no
connection): its shape, and that it parses as Spark SQL. It renders on the adapter
of HISTORIZE_TARGET: dbt-spark (`local`) in the main stack, dbt-databricks
(`databricks`) in its lane; the SQL is the same but for how each adapter names a
relation (`RelationNames` in projects.py)."""
from __future__ import annotations

import os
import textwrap

import pytest
import sqlfluff

from historize_tools import dbt_runner as dbt

from projects import PROJECT_YML, RelationNames

SCHEMA = "historize"

RENDERERS = {
    "row_hash": "{{ historize.row_hash(['b', 'a']) }}",
    "hash_key": "{{ historize.hash_key(['region', 'id', \"timestamp'2026-01-01 00:00:00+00:00'\"]) }}",
    "changes": "{{ historize._scd2_hist_changes_sql(cfg, this, api.Relation.create(identifier='src'), ['region', 'id', 'name']) }}",
    "merge": ("{{ historize._scd2_hist_merge_sql({'cfg': cfg, 'history': this, "
              "'relations': {'staged': api.Relation.create(identifier='pending')}, 'columns': {'business': ['region', 'id', 'name']}, 'retired_columns': ['retired']}) }}"),
    "close_changed": ("{{ historize._scd2_hist_step_sql('close_changed', cfg, this, api.Relation.create(identifier='pending'), "
                      "['region', 'id', 'name'], historize._unchanged_since(none, cfg)) }}"),
    "close_deleted": ("{{ historize._scd2_hist_step_sql('close_deleted', cfg, this, api.Relation.create(identifier='pending'), "
                      "['region', 'id', 'name'], historize._unchanged_since(none, cfg)) }}"),
    "insert_changed": ("{{ historize._scd2_hist_step_sql('insert_changed', cfg, this, api.Relation.create(identifier='pending'), "
                       "['region', 'id', 'name'], historize._unchanged_since(none, cfg)) }}"),
    "insert_new": ("{{ historize._scd2_hist_step_sql('insert_new', cfg, this, api.Relation.create(identifier='pending'), "
                   "['region', 'id', 'name'], historize._unchanged_since(none, cfg)) }}"),
    "plan": "{{ historize._scd2_hist_plan_sql(cfg, this, api.Relation.create(identifier='pending')) }}",
    "checked_merge": ("{{ historize._scd2_hist_merge_sql({'cfg': cfg, 'history': this, "
                      "'relations': {'staged': api.Relation.create(identifier='src')}, 'columns': {'business': ['region', 'id', 'name']}, 'retired_columns': ['retired']}) }}"),
}
# (old type, new type, whether Delta's type widening applies it in place)
WIDENINGS = [
    ("tinyint", "smallint", True), ("smallint", "int", True), ("int", "bigint", True), ("tinyint", "bigint", True),
    ("bigint", "int", False), ("int", "int", False), ("float", "double", True), ("double", "float", False),
    ("int", "double", True), ("bigint", "double", False), ("date", "timestamp_ntz", True), ("date", "timestamp", False),
    ("int", "decimal(10,0)", True), ("int", "decimal(9,0)", False), ("bigint", "decimal(22,2)", True),
    ("decimal(10,2)", "decimal(12,2)", True), ("decimal(10,2)", "decimal(12,4)", True),
    ("decimal(10,2)", "decimal(10,4)", False), ("decimal(10,2)", "decimal(9,2)", False),
    ("decimal(10,2)", "decimal(10,2)", False), ("string", "int", False), ("int", "string", False),
]
RENDERERS["widening"] = " ".join(
    f"{{{{ historize._is_type_widening('{old}', '{new}') }}}}" for old, new, _ in WIDENINGS)
AT = "timestamp'2026-01-01 06:00:00.000000+00:00'"


@pytest.fixture(scope="module")
def names() -> RelationNames:
    return RelationNames(SCHEMA)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, str]:
    """Compiles one model per builder, with unique_key ['region', 'id']."""
    path = dbt.package_project(tmp_path_factory.mktemp("render"), PROJECT_YML)
    for name, body in RENDERERS.items():
        (path / "models" / f"{name}.sql").write_text(textwrap.dedent(f"""\
            {{{{ config(materialized='view', unique_key=['region', 'id']) }}}}
            {{%- set cfg = historize._scd2_hist_config() -%}}
            {body}
            """))
    dbt.environment()
    os.environ["HISTORIZE_SCHEMA"] = SCHEMA  # the profile's default, whatever ran before
    dbt.run(["compile", "--no-populate-cache", "--vars", "{load_timestamp: '2026-01-01 06:00:00', load_run_id: r1}"],
            project_dir=path)
    compiled = path / "target" / "compiled" / "test_project" / "models"
    return {name: " ".join((compiled / f"{name}.sql").read_text().split()) for name in RENDERERS}


def test_row_hash_tokens_are_sorted_by_name_and_length_prefixed(rendered):
    assert rendered["row_hash"] == (
        "xxhash64(concat_ws('', "
        "concat('1:a', cast(length(cast(`a` as string)) as string), ':', cast(`a` as string)), "
        "concat('1:b', cast(length(cast(`b` as string)) as string), ':', cast(`b` as string))))"
    )


def test_hash_key_is_length_prefixed_in_order(rendered):
    assert rendered["hash_key"] == (
        "unhex(left(sha2(concat("
        "cast(length(cast(region as string)) as string), ':', coalesce(cast(region as string), ''), "
        "cast(length(cast(id as string)) as string), ':', coalesce(cast(id as string), ''), "
        "cast(length(cast(timestamp'2026-01-01 00:00:00+00:00' as string)) as string), ':', "
        "coalesce(cast(timestamp'2026-01-01 00:00:00+00:00' as string), '')), 256), 32))"
    )


def test_merge_applies_all_four_effects_in_one_statement(rendered):
    sql = rendered["merge"]
    assert sql.count("merge into") == 1
    # every row joins on its own key (spread by key over the MERGE's tasks); only an update row matches
    assert ("on hist.`region` = chg.`_historize_key_0` and hist.`id` = chg.`_historize_key_1` "
            "and chg._historize_role = 'update' "
            f"and (hist.`version_ended_at` is null or hist.`version_ended_at` = {AT}) "
            "and (hist.`version_ended_at` is null) = chg._historize_has_open") in sql
    assert "when matched and chg._historize_action = 'changed' then update set `version_ended_at` = " + AT in sql
    assert "when matched and chg._historize_action = 'deleted' then delete" in sql
    assert ("when not matched and chg._historize_role = 'insert' then insert "
            "( `merge_key`, `region`, `id`, `name`, `row_hash`, `version_started_at`, `version_ended_at`, "
            "`version_state`, `load_run_id`, `loaded_at` ) values ( unhex(left(sha2(") in sql
    # a deleted key's version, removed, is inserted closed: every column of the table, the
    # retired ones too, from its open version
    assert ("named_struct( 'merge_key', `merge_key`, 'region', `region`, 'id', `id`, 'name', `name`, "
            "'retired', `retired`, 'row_hash', `row_hash`, 'version_started_at', `version_started_at` ) "
            "as _historize_open_version") in sql
    assert ("when not matched and chg._historize_role = 'closed_copy' then insert "
            "( `merge_key`, `region`, `id`, `name`, `retired`, `row_hash`, `version_started_at`, `version_ended_at`, "
            "`version_state`, `load_run_id`, `loaded_at` ) values ( chg._historize_open_version.`merge_key`, "
            "chg._historize_open_version.`region`, chg._historize_open_version.`id`, chg._historize_open_version.`name`, "
            "chg._historize_open_version.`retired`, chg._historize_open_version.`row_hash`, "
            f"chg._historize_open_version.`version_started_at`, {AT}, 'deleted', ") in sql
    assert "when _historize_action = 'changed' then array('update', 'insert')" in sql
    assert "when _historize_action = 'deleted' then array('update', 'closed_copy')" in sql


def test_ordered_steps_close_with_merge_and_insert_with_explicit_columns(rendered, names):
    for step, state in (("close_changed", "changed"), ("close_deleted", "deleted")):
        assert rendered[step].startswith("merge into")
        assert "update" not in rendered[step].split("when matched")[0]  # no UPDATE with a subquery
        assert f"`version_state` = '{state}'" in rendered[step]
    for step, state in (("insert_changed", "changed"), ("insert_new", "new")):
        sql = rendered[step]
        assert sql.startswith("insert into")
        assert (f"insert into {names.table(step)} ( `{step}_key`, `region`, `id`, `name`, `row_hash`, "
                "`version_started_at`, `version_ended_at`, `version_state`, `load_run_id`, `loaded_at` ) select") in sql
        assert f"where chg._historize_action = '{state}'" in sql


def test_change_set_classifies_against_open_versions_only(rendered):
    sql = rendered["changes"]
    assert "where `version_ended_at` is null" in sql
    assert "full outer join open_versions" in sql
    assert f"where `version_ended_at` = {AT} and `version_state` = 'changed'" in sql
    assert "`row_hash` <=> open_versions.`row_hash` then 'unchanged'" in sql


def test_change_set_flags_null_and_duplicate_keys_in_the_same_pass(rendered, names):
    sql = rendered["changes"]
    assert "count(*) over (partition by src.`region`, src.`id`) as _historize_occurrences" in sql
    assert ("when src._historize_in_source and (src.`region` is null or src.`id` is null "
            "or src._historize_occurrences > 1) then 'invalid'") in sql
    assert sql.count(f"from {names.view('src')}") == 1  # the select is read once


def test_plan_reads_the_cached_change_set_outside_any_cte(rendered, names):
    # Spark does not substitute a cached view read inside a CTE
    sql = rendered["plan"]
    assert not sql.startswith("with") and " with " not in sql
    assert "sum(case when _historize_action = 'invalid' then 1 else 0 end)" in sql
    # the newest instant from the open versions and the versions that ended after this load, not the history
    assert ("select greatest(max(hist.`version_started_at`) filter (where hist.`version_ended_at` is null), "
            f"max(hist.`version_ended_at`)) as newest_timestamp from {names.table('plan')} as hist "
            f"where hist.`version_ended_at` is null or hist.`version_ended_at` > {AT} ) as newest") in sql


def test_merge_strategy_computes_checks_and_writes_the_change_set_in_one_statement(rendered, names):
    sql = rendered["checked_merge"]
    assert sql.startswith(f"merge into {names.table('checked_merge')} as hist using ( with historize_changes as ( with keyed_source as")
    assert sql.count("merge into") == 1
    # the checks read the select and the table, never the change set (Spark would compute it again)
    assert sql.count("from historize_changes") == 1
    assert "historize_checks as ( select case when load_facts.null_key_rows > 0 then raise_error(" in sql
    # one aggregate over the select's keys and the table's newest instants (one stage, not one each)
    assert ("select src.`region` as `_historize_key_0`, src.`id` as `_historize_key_1`, count(*) as _historize_occurrences, "
            "true as in_select, cast(null as timestamp) as version_instant "
            f"from {names.view('src')} as src group by src.`region`, src.`id` "
            "union all select null as `_historize_key_0`, null as `_historize_key_1`, null as _historize_occurrences, "
            "false as in_select, instants.version_instant from ( "
            "select coalesce(hist.`version_ended_at`, hist.`version_started_at`) as version_instant "
            f"from {names.table('checked_merge')} as hist "
            f"where hist.`version_ended_at` is null or hist.`version_ended_at` > {AT} ) as instants "
            ") as keys_and_versions ) as load_facts") in sql
    assert "max(version_instant) as newest_timestamp" in sql
    assert ("raise_error(concat('historize: model checked_merge: unique_key (region, id) is duplicated for ', "
            "cast(size(load_facts.duplicated_keys) as string), ' key(s) in the select, e.g. ', ") in sql
    assert ("'example', concat('(', concat_ws(', ', cast(`_historize_key_0` as string), "
            "cast(`_historize_key_1` as string)), ') x', cast(_historize_occurrences as string)))") in sql
    assert (f"when load_facts.newest_timestamp > {AT} then raise_error(concat('historize: model checked_merge: "
            "load_timestamp 2026-01-01 06:00:00.000000 is older than ', ") in sql
    # a rerun's conflict: a row of the change set that would close an open version begun at this
    # load_timestamp raises, once the checks' row (computed first, for the join) passed
    assert ("where case when chg._historize_action in ('changed', 'deleted') and chg._historize_open_started_at = "
            f"{AT} then raise_error(concat('historize: model checked_merge: load_timestamp 2026-01-01 06:00:00.000000 "
            "was already loaded with other data: the version of key (', concat_ws(', ', cast(chg.`_historize_key_0` as string), "
            "cast(chg.`_historize_key_1` as string)), ') began at this load_timestamp and now differs (', chg._historize_action, "
            "'); a rerun must see the same snapshot, a new snapshot needs a new load_timestamp. Nothing was written')) "
            "else historize_checks._historize_checked end") in sql
    assert "as started" not in sql and "conflicts" not in sql
    # every row of the source passes the checks; the change set carries no count of its own
    assert "from historize_changes as chg cross join historize_checks lateral view explode(" in sql
    assert "else true end as _historize_checked" in sql
    # no guard and no count: the MERGE's one read of the table is its own, which Delta's commit checks
    assert "_historize_scope_rows" not in sql
    assert "row_commit_version" not in sql and "_historize_unchanged" not in sql
    # the newest instant: one scan of the open versions and the versions that ended after this load
    assert sql.count(f"from {names.table('checked_merge')} as hist where") == 1


@pytest.mark.parametrize("name", sorted(set(RENDERERS) - {"widening"}))
def test_generated_sql_parses_as_spark_sql(rendered, name):
    sql = rendered[name]
    if name in ("row_hash", "hash_key"):
        sql = f"select {sql} as h"
    parsed = sqlfluff.parse(sql, dialect="sparksql")
    unparsable = [s for s in _segments(parsed) if s.get("type") == "unparsable"]
    assert unparsable == []


def _segments(tree):
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield {"type": key, "value": value}
            yield from _segments(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from _segments(item)


def test_type_widening_follows_delta(rendered):
    assert rendered["widening"].split() == [str(expected) for _, _, expected in WIDENINGS]
