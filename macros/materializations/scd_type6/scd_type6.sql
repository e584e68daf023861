{#- One dimension with per-column SCD types 0, 1, 2 and 3, versions, a current
    flag and an audit trail. See README.md, section scd_type6. -#}
{% materialization scd_type6, adapter='spark' %}
  {%- set cfg = historize._scd_type6_config() -%}

  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set audit_relation = this.incorporate(path={'identifier': this.identifier ~ '_audit'}, type='table') -%}
  {%- set existing_audit = load_cached_relation(audit_relation) if cfg.audit else none -%}
  {%- set source_view = make_temp_relation(this, '__historize_source').incorporate(type='view') -%}
  {%- set changes_view = make_temp_relation(this, '__historize_changes').incorporate(type='view') -%}
  {{ historize._assert_delta_table(existing_relation, cfg.model_name) }}
  {{ historize._assert_delta_table(existing_audit, cfg.model_name) }}
  {#- A dimension that does not exist yet may be a renamed one (with its audit). -#}
  {%- set former_relation = historize._former_table(target_relation, cfg.model_name) if existing_relation is none else none -%}
  {%- set dimension_relation = existing_relation or former_relation -%}
  {%- set former_audit = historize._scd_type6_former_audit(audit_relation) if cfg.audit and existing_audit is none else none -%}

  {#- Both writes fail if another run wrote the dimension after the version
      read here, before anything else (hooks included) reads it. -#}
  {%- set read_version = historize._delta_version(dimension_relation) if dimension_relation is not none else none -%}

  {{ run_hooks(pre_hooks) }}

  {{ historize._log_full_refresh(cfg.model_name, 'a dimension or its audit') }}

  {%- set select_columns = historize._stage_select(source_view, sql) -%}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {%- set type2 = historize._scd_type6_assert_columns(cfg, select_names) -%}
  {%- set has_reason = 'change_reason' in select_names -%}
  {%- set attributes = historize._names_except(select_columns, cfg.unique_key + ['change_reason']) -%}
  {%- set types = {} -%}
  {%- for column in select_columns -%}{%- do types.update({column.name | lower: column.data_type}) -%}{%- endfor -%}

  {%- if dimension_relation is none -%}
    {%- call statement('create_table') -%}
      {{ historize._scd_type6_create_sql(cfg, target_relation, attributes, types) }}
    {%- endcall -%}
  {%- else -%}
    {#- Schema evolution: planned (and refused) before any change, then applied;
        the writes it makes are this run's own, so the version is read again. -#}
    {%- set technical = ['effective_from', 'effective_to', 'current_flag', 'version', 'change_reason', '_hash'] -%}
    {%- set former_key = (former_relation.identifier ~ '_key') | lower if former_relation is not none else none -%}
    {%- set schema_plan = historize._schema_sync_plan(cfg.model_name, dimension_relation,
          historize._columns_named(select_columns, cfg.unique_key + attributes),
          [cfg.surrogate_key] + cfg.type3.values() | list + technical,
          [(former_key, cfg.surrogate_key)] if former_key else []) -%}
    {%- if former_relation is not none -%}
      {{ historize._rename_table(former_relation, target_relation, cfg.model_name) }}
    {%- endif -%}
    {{ historize._schema_sync_apply(schema_plan, cfg.model_name, target_relation, (cfg.type3.values() | list + technical)[0]) }}
    {%- if schema_plan.rehash -%}
      {%- call statement('rehash_current_rows') -%}
        update {{ target_relation }} set _hash = {{ historize.row_hash(type2) }} where current_flag
      {%- endcall -%}
    {%- endif -%}
    {%- if schema_plan.changed -%}
      {%- set read_version = historize._delta_version(target_relation) -%}
    {%- endif -%}
  {%- endif -%}
  {%- if former_audit is not none -%}
    {{ historize._rename_table(former_audit, audit_relation, cfg.model_name) }}
    {%- call statement('audit_column_mapping') -%}
      alter table {{ audit_relation }} set tblproperties ('delta.columnMapping.mode' = 'name')
    {%- endcall -%}
    {%- for suffix in ['_old', '_new'] -%}
      {%- call statement('rename_audit_key' ~ suffix) -%}
        alter table {{ audit_relation }}
        rename column {{ adapter.quote(former_audit.identifier[:-6] ~ '_key' ~ suffix) }} to {{ adapter.quote(cfg.surrogate_key ~ suffix) }}
      {%- endcall -%}
    {%- endfor -%}
    {%- set existing_audit = audit_relation -%}
  {%- endif -%}
  {%- if cfg.audit and existing_audit is none -%}
    {%- call statement('create_audit') -%}
      {{ historize._scd_type6_create_audit_sql(cfg, audit_relation, types) }}
    {%- endcall -%}
  {%- endif -%}

  {%- if read_version is none -%}
    {%- set read_version = historize._delta_version(target_relation) -%}
  {%- endif -%}
  {%- set unchanged = historize._unchanged_since_predicate(target_relation, read_version, cfg.model_name) -%}

  {{ historize._assert_unique_key(source_view, cfg.unique_key, cfg.model_name) }}

  {{ historize._uncache_view(changes_view) }}
  {%- call statement('cache_changes') -%}
    cache table {{ changes_view }} as
    {{ historize._scd_type6_changes_sql(cfg, target_relation, source_view, attributes, type2, has_reason) }}
  {%- endcall -%}
  {%- set plan = run_query(historize._scd_type6_plan_sql(cfg, target_relation, changes_view)).rows[0] -%}
  {{ historize._assert_plan_applicable(plan, cfg.model_name, target_relation, 'current row') }}

  {%- if plan['inserted'] + plan['changed'] + plan['deleted'] + plan['type1_changed'] == 0 -%}
    {%- call noop_statement('main', 'OK 0 (no change)', 'OK', 0) -%}{%- endcall -%}
  {%- else -%}
    {#- The audit first: its MERGE inserts only what is missing, so a run that
        fails between the two writes ends correct when rerun. -#}
    {%- if cfg.audit -%}
      {%- call statement('audit') -%}
        {{ historize._scd_type6_audit_merge_sql(cfg, audit_relation, changes_view, attributes, unchanged) }}
      {%- endcall -%}
    {%- endif -%}
    {%- call statement('main') -%}
      {{ historize._scd_type6_merge_sql(cfg, target_relation, changes_view, attributes, type2, unchanged) }}
    {%- endcall -%}
  {%- endif -%}
  {{ log("historize: " ~ cfg.model_name ~ ": " ~ plan['inserted'] ~ " new, " ~ plan['changed'] ~ " Type 2 changes, "
      ~ plan['type1_changed'] ~ " Type 1 changes, " ~ plan['deleted'] ~ " deleted", info=true) }}

  {{ historize._uncache_view(changes_view) }}
  {{ historize._uncache_view(source_view) }}

  {{ run_hooks(post_hooks) }}

  {%- do persist_docs(target_relation, model) -%}

  {{ return({'relations': [target_relation] + ([audit_relation] if cfg.audit else [])}) }}
{% endmaterialization %}
