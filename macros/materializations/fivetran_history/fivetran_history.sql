{#- Fivetran history-mode table kept from batches of change events.
    See docs/fivetran_history.md and docs/how_a_load_runs.md. -#}
{% materialization fivetran_history, adapter='spark' %}
  {%- set cfg = historize._fivetran_history_config() -%}

  {#- A table that does not exist yet may be a renamed history table. -#}
  {%- set relations = historize._history_relations(cfg) -%}
  {%- set target_relation, existing_relation, staged_view, found = relations.history, relations.existing,
        relations.staged, relations.found -%}

  {{ run_hooks(pre_hooks) }}

  {#- A select dbt reads in part (--empty, --sample) leaves the table as it is. -#}
  {%- set left_as_is = historize._left_as_is(cfg, relations) -%}
  {%- if left_as_is -%}
    {{ historize._report_left_as_is(left_as_is) }}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}

  {%- set select_columns = historize._stage_select(staged_view, sql) -%}
  {%- set columns = historize._fivetran_history_columns(cfg, select_columns) -%}
  {%- if found.relation is not none -%}
    {#- No hash to bring in line: versions come from the events. -#}
    {%- set typed = [] -%}
    {%- for name in cfg.unique_key + columns.data -%}{%- do typed.append({'name': name, 'data_type': columns.types[name]}) -%}{%- endfor -%}
    {%- set table_sync = historize._plan_table_sync(cfg, found, typed, cfg.technical_columns) -%}
  {%- endif -%}
  {#- The batch is checked before a table is created or changed. -#}
  {%- set checked = historize._fivetran_history_check_batch(cfg, staged_view) -%}
  {%- if found.relation is none and cfg.adopt_from -%}
    {#- The first load of a model with adopt_from takes over the Fivetran table's versions,
        checked before anything is written (adoption.sql); the batch is then applied to them. -#}
    {%- set adoption = historize._fivetran_history_adoption(cfg, target_relation, columns) -%}
    {%- set adopted_rows_sql = historize._fivetran_history_adoption_sql(cfg, adoption) -%}
    {{ historize._adopt(cfg, target_relation, adoption, adopted_rows_sql,
        historize._fivetran_history_adopted_versions_sql(cfg, adopted_rows_sql, columns), partition_by=cfg.partition_by) }}
  {%- elif found.relation is none -%}
    {%- call statement('create_' ~ target_relation.identifier) -%}
      {{ historize._create_history_table_sql(target_relation, historize._history_properties(cfg),
          columns=columns.table_types, partition_by=cfg.partition_by) }}
    {%- endcall -%}
    {%- do adapter.cache_added(target_relation) -%}
  {%- elif table_sync.alters_table -%}
    {{ historize._sync_history_table(cfg, found, target_relation, table_sync, cfg.valid_from) }}
  {%- endif -%}

  {#- The load is its MERGE alone: it computes the change set (of one event per key
      without the walk) and writes it; its one read of the table is its own, which
      Delta's commit fails if another run wrote what it read. -#}
  {{ historize._write_per_task(cfg, true) }}
  {%- call statement('main', fetch_result=true) -%}
    {{ historize._fivetran_history_merge_sql(cfg, target_relation, staged_view, columns,
        one_event_per_key=checked.one_event_per_key, first_event_at=checked.first_event_at) }}
  {%- endcall -%}
  {{ historize._write_per_task(cfg, false) }}
  {{ historize._report_load(cfg, historize._merge_versions_load(load_result('main'))) }}

  {{ historize._drop_session_views(relations.cached + [relations.staged]) }}

  {#- Grants and docs, then post-hooks, as dbt's own materializations order them; a history
      table is never replaced, so grants another tool set stay unless the grants config says so. -#}
  {%- set grant_config = config.get('grants') -%}
  {%- do apply_grants(target_relation, grant_config, should_revoke=should_revoke(existing_relation, full_refresh_mode=false)) -%}
  {%- do persist_docs(target_relation, model) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
