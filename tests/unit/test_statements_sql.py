"""The MERGE scd_type6 and fivetran_history generate, rendered by `dbt compile` (no Spark)
as the docs show them (historize_tools.docs_sql.RENDERED), against hand-written
expectations of their structure: what each clause writes, what a guard reads, that
every insert names its columns; on the adapter of HISTORIZE_TARGET, as
tests/unit/test_scd2_hist_sql.py renders scd2_hist's statements."""
from __future__ import annotations

import re

import pytest
from historize_tools import dbt_runner as dbt
from historize_tools import docs_sql

from projects import RelationNames
from sql_lint import lint

AT = "timestamp'2026-01-02 06:00:00.000000+00:00'"


@pytest.fixture(scope="module")
def names() -> RelationNames:
    return RelationNames(docs_sql.SCHEMA)


@pytest.fixture(scope="module")
def statements() -> dict[str, str]:
    return docs_sql.render()


@pytest.fixture(scope="module")
def rendered(statements) -> dict[str, str]:
    """Each statement on one line, its comments left out."""
    return {name: " ".join(" ".join(line for line in sql.splitlines() if not line.strip().startswith("--")).split())
            for name, sql in statements.items()}


def test_scd_type6_merge_closes_rewrites_type1_and_inserts_versions_in_one_statement(rendered, names):
    sql = rendered["scd_type6-merge"]
    assert sql.startswith(f"merge into {names.table('dim_program')} as hist using ( with historize_changes as ( "
                          "with src as ( select src.*, true as _historize_in_source,")
    # the change set reads the dimension itself (no earlier read, no guard); the per-key summary
    # carries the first version's Type 0 columns and the latest's Type 1 and Type 3 columns only
    assert "version as of" not in sql and "unchanged_since" not in sql
    assert ("min_by(named_struct('created_on', `created_on`), `version`) as _historize_first, "
            "max_by(named_struct('program_name', `program_name`, 'threshold', `threshold`), `version`) "
            "as _historize_latest") in sql
    # the checks: one row that raises the first failing refusal before anything is written
    assert ("from historize_changes as chg cross join historize_checks lateral view explode(") in sql
    assert ("where `effective_from` > timestamp'2026-01-02 06:00:00.000000+00:00' or (not `current_flag` and "
            "`effective_to` > timestamp'2026-01-02 06:00:00.000000+00:00')") in sql
    assert ("then raise_error(concat('historize: model dim_program: load_timestamp 2026-01-02 06:00:00.000000 was "
            "already loaded with other data: the current row of key (', concat_ws(', ', "
            "cast(chg.`_historize_key_0` as string)), ') began at this load_timestamp") in sql
    assert "else historize_checks._historize_checked end ) as chg" in sql
    # a key with history and a new version: an update row (close, Type 1) and an insert row
    assert ("when _historize_has_history and _historize_action in ('new', 'changed') and "
            "(_historize_action = 'changed' or _historize_type1_changed) then array('update', 'insert')") in sql
    # every row joins on its own key (spread by key over the MERGE's tasks); only an update row matches
    assert "on hist.`program_id` = chg.`_historize_key_0` and chg._historize_role = 'update' when matched and" in sql
    # Type 1 rewritten in every row of the key; only the current row is closed
    assert ("`program_name` = case when chg._historize_type1_changed then chg.`program_name` "
            "else hist.`program_name` end") in sql
    assert (f"`effective_to` = case when hist.`current_flag` and chg._historize_action in ('changed', 'deleted') "
            f"then {AT} else hist.`effective_to` end") in sql
    assert ("`change_reason` = case when hist.`current_flag` and chg._historize_action = 'deleted' "
            "then 'deleted_in_source' else hist.`change_reason` end") in sql
    # the new version: explicit columns, Type 0 from the first version, Type 3 from the latest
    assert ("when not matched and chg._historize_role = 'insert' then insert ( `dim_program_key`, `program_id`, "
            "`created_on`, `program_name`, `threshold`, `funding_cap`, `previous_threshold`, `effective_from`, "
            "`effective_to`, `current_flag`, `version`, `change_reason`, `_hash` ) values (") in sql
    assert "case when chg._historize_has_history then chg._historize_first.`created_on` else chg.`created_on` end" in sql
    assert "case when chg._historize_has_history then chg._historize_latest.`threshold` end" in sql
    assert "cast(coalesce(chg._historize_max_version, 0) + 1 as int)" in sql
    assert sql.count("merge into") == 1


def test_fivetran_history_merge_computes_its_change_set_and_writes_the_difference(rendered, names):
    sql = rendered["fivetran_history-merge"]
    assert sql.startswith(f"merge into {names.table('orders_history')} as hist using ( with batch as (")
    # the batch read once, from the staged select
    assert sql.count(f"from {names.view('orders_history__historize_source')}") == 1
    # both sides grouped by key and start, compared
    assert "group by sides.`id`, sides._historize_start" in sql
    assert ("case when by_start.wanted is null then 'deleted' when by_start.affected is null then 'new' "
            "when by_start.wanted <=> by_start.affected then 'unchanged' else 'changed' end as _historize_action") in sql
    assert "where _historize_action <> 'unchanged'" in sql
    # no guard: the MERGE is the load's one read of the table, which Delta's commit checks
    assert "row_commit_version" not in sql and "_historize_unchanged" not in sql
    # matched on the key and the start, among the versions that end or begin at or after the
    # batch's first event (Delta skips the files of the others); delete, update, insert
    first_event = "timestamp'2026-01-01 09:30:00.000000+00:00'"
    assert sql.endswith(
        ") as chg on hist.`id` = chg.`id` and hist.`_fivetran_start` = chg.`_fivetran_start` "
        f"and ( hist.`_fivetran_end` >= {first_event} or hist.`_fivetran_start` >= {first_event} "
        "or hist.`_fivetran_end` is null ) "
        "when matched and chg._historize_action = 'deleted' then delete "
        "when matched and chg._historize_action = 'changed' then update set `amount` = chg.`amount`, "
        "`status` = chg.`status`, `_fivetran_end` = chg.`_fivetran_end`, `_fivetran_active` = chg.`_fivetran_active`, "
        "`_fivetran_synced` = chg.`_fivetran_synced` "
        "when not matched and chg._historize_action = 'new' then insert ( `id`, `amount`, `status`, `_fivetran_start`, "
        "`_fivetran_end`, `_fivetran_active`, `_fivetran_synced` ) values ( chg.`id`, chg.`amount`, chg.`status`, "
        "chg.`_fivetran_start`, chg.`_fivetran_end`, chg.`_fivetran_active`, chg.`_fivetran_synced` )")


@pytest.mark.parametrize("name", sorted(docs_sql.RENDERED))
def test_each_rendered_statement_passes_lint(statements, name):
    assert lint(statements[name], generated=True) == []


def test_scd2_hist_events_merge_rebuilds_the_pending_keys_and_writes_the_difference(rendered, names):
    sql = rendered["scd2_hist-events-merge"]
    table, events = names.table("customer_hist"), names.table("customer_hist__historize_events")
    assert sql.startswith(f"merge into {table} as hist using ( with pending_keys as ( select distinct `customer_id` "
                          f"from {events} where not _historize_applied ), wanted as ( with key_events as ( "
                          "select events.`customer_id`, events.`changed_at`, events._historize_deleted, "
                          "events._historize_image, cast(null as string) as _historize_began "
                          f"from {events} as events left semi join pending_keys")
    # a key's last event at an instant decides its state there; the table's versions of those keys beside them
    assert ("row_number() over ( partition by `customer_id`, `changed_at` order by `_historize_deleted` desc ) "
            "as _historize_rank") in sql
    assert "where not (_historize_state <=> _historize_state_before)" in sql
    assert (f"existing as ( select hist.* from {table} as hist left semi join pending_keys "
            "on hist.`customer_id` = pending_keys.`customer_id` )") in sql
    # the attributes: not the sequence, not the column deleted_when reads
    assert ("when not matched and chg._historize_action = 'new' then insert ( `customer_hist_key`, `customer_id`, "
            "`name`, `tier`, `row_hash`, `version_started_at`, `version_ended_at`, `version_state`, `load_run_id`, "
            "`loaded_at` ) values (") in sql
    assert "wanted.`version_started_at` is null then 'deleted'" in sql
    assert ("on hist.`customer_id` = chg.`_historize_key_0` and hist.`version_started_at` = chg._historize_started_at "
            "when matched and chg._historize_action = 'deleted' then delete") in sql
    # the guard: every row of the table (a late event may rewrite any version)
    assert ("(count(*) = 4000 and coalesce(max(_metadata.row_commit_version), -1) <= 12) or raise_error('historize: "
            f"model customer_hist: {table} was written by another run after version 12") in sql
    assert sql.count("merge into") == 1


def test_scd2_hist_adoption_reads_the_snapshot_once_and_orders_each_key_by_time(rendered, names):
    sql = rendered["scd2_hist-adopt"]
    snapshot = names.table("customers_snapshot")
    # the snapshot's columns as the model holds them, its interval and deletion records read once
    assert sql.startswith("with adopted_rows as ( select adopted.`customer_id` as `customer_id`, adopted.`name` as "
                          "`name`, adopted.`tier` as `tier`, xxhash64(")
    assert ("cast(adopted.`dbt_valid_from` as timestamp) as _historize_started_at, case when adopted.`dbt_valid_to` "
            "is null or adopted.`dbt_valid_to` >= timestamp'9999-01-01' then cast(null as timestamp) "
            "else cast(adopted.`dbt_valid_to` as timestamp) end as _historize_ended_at") in sql
    assert ("coalesce(lower(cast(adopted.`dbt_is_deleted` as string)) in ('true', '1', 'y', 'yes'), false) "
            "as _historize_deletion") in sql
    # the steps, in order, each reading the one before; the snapshot the only table read
    steps = ["adopted_rows", "first_checks", "classified", "kept", "spans", "neighbours", "versions"]
    assert re.findall(r"(\w+) as \( select", sql) == steps
    assert re.findall(r" from (\S+)", sql) == [snapshot, *steps]
    # every window over the key alone (one shuffle); a repaired run of unchanged versions, by key and run
    assert sql.count("partition by `customer_id`") == 5
    assert sql.count("partition by `customer_id`, _historize_run") == 1
    # the history's columns, the version key from the key and the start
    assert sql.endswith("select unhex(left(sha2(concat(cast(length(cast(versions.`customer_id` as string)) as string), ':', "
                        "coalesce(cast(versions.`customer_id` as string), ''), cast(length(cast(versions."
                        "_historize_started_at as string)) as string), ':', coalesce(cast(versions._historize_started_at "
                        "as string), '')), 256), 32)) as `customer_adopted_key`, versions.`customer_id`, versions.`name`, "
                        "versions.`tier`, versions.`row_hash`, versions._historize_started_at as `version_started_at`, "
                        "versions._historize_span_end as `version_ended_at`, versions._historize_state as "
                        "`version_state`, 'r2' as `load_run_id`, timestamp'2026-01-02 06:05:00.000000+00:00' as "
                        "`loaded_at` from versions")


# The statements a load sends that differ by adapter, each rendered on its own line: the
# setting a partitioned table's writes take, then the caches of a staged view and of a change set.
BY_ADAPTER = (
    "{%- set staged = api.Relation.create(identifier='customer_hist__historize_source') -%}"
    "{%- set change_set = api.Relation.create(identifier='customer_hist__historize_changes') -%}"
    "{{ adapter.dispatch('write_per_task_sql', 'historize')(true) }}\n"
    "{{ adapter.dispatch('write_per_task_sql', 'historize')(false) }}\n"
    "{{ adapter.dispatch('cache_view_sql', 'historize')(staged) }}\n"
    "{{ adapter.dispatch('cache_query_sql', 'historize')(change_set, 'select 1 as id') | replace('\\n', ' ') }}\n")


def test_a_load_sends_databricks_no_set_and_no_cache_a_sql_warehouse_refuses(tmp_path, names):
    project = dbt.package_project(tmp_path, dbt.project_yml("by_adapter"))
    (project / "models" / "by_adapter.sql").write_text(BY_ADAPTER)
    dbt.environment()
    dbt.run(["compile", "--no-populate-cache", "--quiet", "--select", "by_adapter"], project_dir=project)
    compiled = (project / "target" / "compiled" / "by_adapter" / "models" / "by_adapter.sql").read_text()
    lines = [" ".join(line.split()) for line in compiled.splitlines()]
    staged, change_set = names.view("customer_hist__historize_source"), names.view("customer_hist__historize_changes")
    if names.databricks:
        assert lines == ["None", "None", "None", f"create or replace temporary view {change_set} as select 1 as id"]
    else:
        assert lines == ["set spark.databricks.delta.merge.repartitionBeforeWrite.enabled = false",
                         "reset spark.databricks.delta.merge.repartitionBeforeWrite.enabled",
                         f"cache lazy table {staged}", f"cache lazy table {change_set} as select 1 as id"]


def test_a_bitemporal_merge_supersedes_and_records_from_the_events_believed(rendered, names):
    sql = rendered["scd2_hist-bitemporal-merge"]
    table, events = names.table("pen_prices_hist"), names.table("pen_prices_hist__historize_events")
    assert sql.startswith(f"merge into {table} as hist using ( with pending_keys as ( select distinct `pen_id` "
                          f"from {events} where not _historize_applied ), current_belief as ( select hist.* "
                          f"from {table} as hist left semi join pending_keys on hist.`pen_id` = pending_keys.`pen_id` "
                          "where hist.`superseded_at` is null ), new_belief as (")
    # of a key and sequence, the image recorded last is believed
    assert ("row_number() over ( partition by `pen_id`, `effective_at` order by _historize_recorded_at desc, "
            "_historize_image desc ) as _historize_recorded_rank from key_events ) as recorded_events "
            "where _historize_recorded_rank = 1") in sql
    # a version is compared by key and start on its end, state and row_hash
    assert ("from new_belief full outer join current_belief on new_belief.`pen_id` = current_belief.`pen_id` "
            "and new_belief.`version_started_at` = current_belief.`version_started_at`") in sql
    # a replaced version is superseded and recorded, from one read of the comparison
    assert ("roles._historize_action from compared lateral view explode( case when compared._historize_comparison = "
            "'replaced' then array('superseded', 'recorded') else array(compared._historize_comparison) end ) roles "
            "as _historize_action where compared._historize_comparison <> 'unchanged' )") in sql
    assert sql.count("from compared") == 1
    assert sql.endswith(
        ") as chg on hist.`pen_prices_hist_key` = chg._historize_merge_key and chg._historize_action = 'superseded' "
        "and hist.`superseded_at` is null "
        "when matched and chg._historize_action = 'superseded' then update set "
        f"`superseded_at` = {docs_sql.RUN_START} "
        "when not matched and chg._historize_action = 'recorded' then insert ( `pen_prices_hist_key`, `pen_id`, "
        "`price`, `ink`, `row_hash`, `version_started_at`, `version_ended_at`, `version_state`, `load_run_id`, "
        "`loaded_at`, `recorded_at`, `superseded_at` ) values ( chg.`pen_prices_hist_key`, chg.`pen_id`, chg.`price`, "
        "chg.`ink`, chg.`row_hash`, chg.`version_started_at`, chg.`version_ended_at`, chg.`version_state`, "
        "chg.`load_run_id`, chg.`loaded_at`, chg.`recorded_at`, chg.`superseded_at` )")


def test_a_bitemporal_snapshot_merge_reads_the_belief_from_its_load_to_the_next(rendered, names):
    sql = rendered["scd2_hist-bitemporal-snapshot-merge"]
    table, staged = names.table("price_list_hist"), names.table("price_list_hist__historize_staged")
    at, next_at = "timestamp'2026-01-02 06:00:00.000000+00:00'", "timestamp'2026-01-03 06:00:00.000000+00:00'"
    # the keys whose row at the load the snapshot changes (added, changed or gone), from the
    # key and row_hash of the versions in effect at the load
    assert sql.startswith(
        f"merge into {table} as hist using ( with at_load as ( select hist.`pen_id`, hist.`row_hash` from {table} "
        f"as hist where hist.`superseded_at` is null and (hist.`version_ended_at` is null or "
        f"hist.`version_ended_at` >= {at}) and hist.`version_started_at` <= {at} and (hist.`version_ended_at` is null "
        f"or hist.`version_ended_at` > {at}) ), affected_keys as ( select coalesce(src.`pen_id`, at_load.`pen_id`) "
        f"as `_historize_key_0` from {staged} as src full outer join at_load on src.`pen_id` = at_load.`pen_id` "
        "where not (src.`row_hash` <=> at_load.`row_hash`) ), ")
    # of those keys only, the whole versions in effect before the load, at it and at the next load
    # (NULL where none): the keys joined to their versions, so that affected_keys has one reader
    assert ("believed as ( select affected_keys.`_historize_key_0`, first(struct(hist.*)) filter (where "
            f"hist.`version_started_at` < {at}) as before_load, first(struct(hist.*)) filter ( where "
            f"hist.`version_started_at` <= {at} and (hist.`version_ended_at` is null or hist.`version_ended_at` > "
            f"{at}) ) as at_load, first(struct(hist.*)) filter ( where hist.`version_started_at` <= {next_at} and "
            f"(hist.`version_ended_at` is null or hist.`version_ended_at` > {next_at}) ) as at_next from affected_keys "
            f"left join {table} as hist on affected_keys.`_historize_key_0` = hist.`pen_id` and hist.`superseded_at` "
            f"is null and (hist.`version_ended_at` is null or hist.`version_ended_at` >= {at}) and "
            f"hist.`version_started_at` <= {next_at} group by affected_keys.`_historize_key_0` )") in sql
    assert (f"from believed left join {staged} as src on believed.`_historize_key_0` = src.`pen_id` )") in sql
    # a restatement: a version that opens again began as it did
    assert ("left join opened_by_change as opened on affected.`_historize_key_0` = opened.`pen_id` and "
            "affected.before_load.`version_started_at` = opened._historize_closed_at") in sql
    # per key, in one row: the versions it replaces, each once, and the three sides' versions
    assert ("versions as ( select array_distinct(filter( array(ends.before_load, ends.at_load, ends.at_next), "
            "version -> version is not null)) as believed_versions, filter(array( case when ends.has_before then "
            "named_struct( 'price_list_hist_key', ") in sql
    assert ") end ), version -> version is not null) as new_versions from ends )" in sql
    assert sql.count("from ends") == 1
    # compared by version start in the key's row itself: no join of two readers of `affected`
    assert ("by_start as ( select inline(transform( array_distinct(concat( transform(versions.new_versions, version "
            "-> version.`version_started_at`), transform(versions.believed_versions, version -> "
            "version.`version_started_at`) )), started -> named_struct( 'new_version', "
            "get(filter(versions.new_versions, version -> version.`version_started_at` = started), 0), 'believed', "
            "get(filter(versions.believed_versions, version -> version.`version_started_at` = started), 0) ) )) "
            "from versions )") in sql
    assert ("by_start.believed.`price_list_hist_key` as _historize_believed_key, case when by_start.believed is null "
            "then 'recorded' when by_start.new_version is null then 'superseded' when by_start.new_version.`row_hash` "
            "<=> by_start.believed.`row_hash` and by_start.new_version.`version_ended_at` <=> "
            "by_start.believed.`version_ended_at` and by_start.new_version.`version_state` <=> "
            "by_start.believed.`version_state` then 'unchanged' else 'replaced' end as _historize_comparison from "
            "by_start )") in sql
    assert sql.count("full outer join") == 1  # the select with the versions at the load, once
    # it supersedes only rows of that belief, and reads no partition outside it
    assert sql.endswith(
        ") as chg on hist.`price_list_hist_key` = chg._historize_merge_key and chg._historize_action = 'superseded' "
        "and hist.`superseded_at` is null "
        f"and (hist.`version_ended_at` is null or hist.`version_ended_at` >= {at}) "
        "when matched and chg._historize_action = 'superseded' then update set "
        f"`superseded_at` = {docs_sql.RUN_START} "
        "when not matched and chg._historize_action = 'recorded' then insert ( `price_list_hist_key`, `pen_id`, "
        "`price`, `ink`, `row_hash`, `version_started_at`, `version_ended_at`, `version_state`, `load_run_id`, "
        "`loaded_at`, `recorded_at`, `superseded_at` ) values ( chg.`price_list_hist_key`, chg.`pen_id`, "
        "chg.`price`, chg.`ink`, chg.`row_hash`, chg.`version_started_at`, chg.`version_ended_at`, "
        "chg.`version_state`, chg.`load_run_id`, chg.`loaded_at`, chg.`recorded_at`, chg.`superseded_at` )")
