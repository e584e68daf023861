{#- SCD Type 2 history (`_hist`) table kept from a current snapshot.
    See README.md, section scd2_hist. -#}
{% materialization scd2_hist, adapter='spark' %}
  {%- set cfg = historize._scd2_hist_config() -%}

  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set source_view = make_temp_relation(this, '__historize_source').incorporate(type='view') -%}
  {%- set changes_view = make_temp_relation(this, '__historize_changes').incorporate(type='view') -%}
  {%- set pending_view = make_temp_relation(this, '__historize_pending').incorporate(type='view') -%}
  {{ historize._assert_delta_table(existing_relation, cfg.model_name) }}

  {{ run_hooks(pre_hooks) }}

  {{ historize._log_full_refresh(cfg.model_name) }}

  {#- The select as a view; its columns decide the attributes. -#}
  {%- set select_columns = historize._stage_select(source_view, sql) -%}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {{ historize._scd2_hist_assert_select(cfg, select_names) }}
  {%- set has_row_hash = cfg.row_hash in select_names -%}
  {%- set business_columns = historize._names_except(select_columns, [cfg.row_hash]) -%}
  {%- set attribute_columns = historize._columns_named(select_columns,
        historize._names_except(select_columns, cfg.unique_key + [cfg.row_hash])) -%}

  {%- call statement('stage_source') -%}
    create or replace temporary view {{ source_view }} as
    {{ historize._scd2_hist_source_sql(cfg, sql, attribute_columns, has_row_hash) }}
  {%- endcall -%}

  {#- A table that does not exist yet may be a renamed history table. -#}
  {%- set former_relation = historize._former_table(target_relation, cfg.model_name, '_hist') if existing_relation is none else none -%}
  {%- set history_relation = existing_relation or former_relation -%}

  {%- if history_relation is none -%}
    {{ historize._assert_unique_key(source_view, cfg.unique_key, cfg.model_name) }}
    {%- call statement('main') -%}
      {{ historize._scd2_hist_create_sql(cfg, target_relation, source_view, business_columns) }}
    {%- endcall -%}
  {%- else -%}
    {#- Schema evolution: planned (and refused) before any change, then applied. -#}
    {%- set schema_plan = historize._schema_sync_plan(cfg.model_name, history_relation,
          historize._columns_named(select_columns, business_columns),
          [cfg.hist_key] + historize._scd2_hist_technical_columns(cfg),
          [] if former_relation is none else [((former_relation.identifier ~ '_key') | lower, cfg.hist_key)]) -%}
    {#- Keys are checked with the change set below (one read of the select),
        unless the table's schema must change first. -#}
    {%- if former_relation is not none or schema_plan.changed -%}
      {{ historize._assert_unique_key(source_view, cfg.unique_key, cfg.model_name) }}
    {%- endif -%}
    {%- if former_relation is not none -%}
      {{ historize._rename_table(former_relation, target_relation, cfg.model_name) }}
    {%- endif -%}
    {{ historize._schema_sync_apply(schema_plan, cfg.model_name, target_relation, cfg.row_hash) }}
    {%- if schema_plan.rehash and not has_row_hash -%}
      {%- call statement('rehash_open_versions') -%}
        {{ historize._scd2_hist_rehash_sql(cfg, target_relation, attribute_columns) }}
      {%- endcall -%}
    {%- endif -%}
    {%- call statement('stage_changes') -%}
      create or replace temporary view {{ changes_view }} as
      {{ historize._scd2_hist_changes_sql(cfg, target_relation, source_view, business_columns) }}
    {%- endcall -%}
    {{ historize._uncache_view(pending_view) }}
    {%- call statement('cache_changes') -%}
      cache table {{ pending_view }} as select * from {{ changes_view }} where _historize_action <> 'unchanged'
    {%- endcall -%}
    {%- set plan = historize._scd2_hist_plan(cfg, target_relation, pending_view) -%}
    {%- if plan.close_changed + plan.close_deleted + plan.insert_changed + plan.insert_new == 0 -%}
      {%- call noop_statement('main', 'OK 0 (no change)', 'OK', 0) -%}{%- endcall -%}
    {%- elif cfg.strategy == 'merge' -%}
      {%- call statement('main') -%}
        {{ historize._scd2_hist_merge_sql(cfg, target_relation, pending_view, business_columns) }}
      {%- endcall -%}
    {%- else -%}
      {%- for step in ['close_changed', 'close_deleted', 'insert_changed', 'insert_new'] if plan[step] > 0 -%}
        {%- call statement('main' if loop.last else step) -%}
          {{ historize._scd2_hist_step_sql(step, cfg, target_relation, pending_view, business_columns) }}
        {%- endcall -%}
      {%- endfor -%}
    {%- endif -%}
    {{ historize._uncache_view(pending_view) }}
    {{ log("historize: " ~ cfg.model_name ~ ": " ~ plan.close_changed ~ " changed, " ~ plan.close_deleted
        ~ " deleted, " ~ plan.insert_new ~ " new (" ~ cfg.strategy ~ ")", info=true) }}
  {%- endif -%}

  {{ historize._uncache_view(source_view) }}

  {{ run_hooks(post_hooks) }}

  {%- do persist_docs(target_relation, model) -%}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
