{#- One dimension with per-column SCD types 0, 1, 2 and 3, versions, a current
    flag and an audit trail. See README.md, sections scd_type6 and "How a
    load runs". -#}
{% materialization scd_type6, adapter='spark' %}
  {%- set cfg = historize._scd_type6_config() -%}

  {#- A dimension that does not exist yet may be a renamed one (with its audit). -#}
  {%- set relations = historize._history_relations(cfg) -%}
  {%- set target_relation, existing_relation, source_view, changes_view, found = relations.target, relations.existing,
        relations.source, relations.changes, relations.found -%}
  {%- set audit_relation = this.incorporate(path={'identifier': this.identifier ~ '_audit'}, type='table') -%}
  {%- set existing_audit = load_cached_relation(audit_relation) if cfg.audit else none -%}
  {{ historize._assert_delta_table(existing_audit, cfg.model_name) }}
  {%- set former_audit = historize._scd_type6_former_audit(cfg, audit_relation) if cfg.audit and existing_audit is none else none -%}

  {{ run_hooks(pre_hooks) }}

  {{ historize._log_full_refresh(cfg.model_name) }}

  {%- set select_columns = historize._stage_select(source_view, sql) -%}
  {%- set columns = historize._scd_type6_columns(cfg, select_columns) -%}
  {%- set key_check = {'builder': historize._assert_unique_key, 'args': [source_view, cfg.unique_key, cfg.model_name]} -%}

  {#- Keys are checked with the change set below (one read of the select),
      unless a table must be created or changed first. -#}
  {%- if found.relation is none or (cfg.audit and existing_audit is none) -%}
    {{ key_check.builder(*key_check.args) }}
  {%- endif -%}
  {%- if found.relation is none -%}
    {{ historize._create_history_table(target_relation, historize._history_properties(cfg),
        columns=historize._scd_type6_table_types(cfg, columns)) }}
  {%- else -%}
    {%- set state = historize._read_table_state(found.relation) -%}
    {%- set synced = historize._sync_history_table(cfg, found, target_relation, state,
          historize._columns_named(select_columns, cfg.unique_key + columns.attributes),
          [cfg.version_key] + cfg.type3.values() | list + cfg.technical_columns,
          (cfg.type3.values() | list + cfg.technical_columns)[0], key_check) -%}
    {%- if synced.plan.rehash -%}
      {%- call statement('rehash_current_rows') -%}
        update {{ target_relation }}
        set {{ adapter.quote(cfg.hash) }} = {{ historize.row_hash(columns.type2) }}
        where {{ adapter.quote(cfg.current_flag) }}
      {%- endcall -%}
    {%- endif -%}
  {%- endif -%}
  {%- if former_audit is not none -%}
    {{ historize._scd_type6_rename_audit(cfg, former_audit, audit_relation) }}
  {%- elif cfg.audit and existing_audit is none -%}
    {{ historize._create_history_table(audit_relation, cfg.audit_properties,
        columns=historize._scd_type6_audit_types(cfg, columns), for_model=false) }}
  {%- endif -%}

  {#- Both writes fail if another run writes the dimension after this read. -#}
  {%- set read = historize._read_version(target_relation, cfg.guard_scope) -%}
  {{ historize._stage_change_set(changes_view,
      historize._scd_type6_changes_sql(cfg, target_relation, source_view, columns)) }}
  {%- set plan = run_query(historize._scd_type6_plan_sql(cfg, target_relation, changes_view)).rows[0] -%}
  {{ historize._assert_valid_keys(plan, changes_view, cfg) }}
  {{ historize._assert_plan_applicable(plan, cfg, target_relation, 'current row') }}
  {{ historize._write_or_noop(cfg, plan['new'] + plan['changed'] + plan['deleted'] + plan['type1_changed'],
      historize._scd_type6_statements(cfg, target_relation, audit_relation, changes_view, columns), read) }}
  {{ historize._log_load(cfg, plan, plan['type1_changed'] ~ " Type 1 changed") }}

  {{ historize._drop_session_views(relations) }}

  {{ run_hooks(post_hooks) }}

  {{ historize._apply_docs_and_grants(target_relation, existing_relation) }}

  {{ return({'relations': [target_relation] + ([audit_relation] if cfg.audit else [])}) }}
{% endmaterialization %}


{#- The audit table of a former name of the model, when this model's audit
    does not exist yet: it is renamed along with the dimension. -#}
{% macro _scd_type6_former_audit(cfg, audit_relation) %}
  {%- for former in cfg.former_names -%}
    {%- set found = adapter.get_relation(database=audit_relation.database, schema=audit_relation.schema,
          identifier=former ~ '_audit') -%}
    {%- if found is not none -%}
      {{ return(found) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#- Renames a former model's audit table and its version key columns. -#}
{% macro _scd_type6_rename_audit(cfg, former_audit, audit_relation) %}
  {{ historize._rename_table(former_audit, audit_relation, cfg.model_name) }}
  {%- call statement('audit_column_mapping') -%}
    alter table {{ audit_relation }} set tblproperties ('delta.columnMapping.mode' = 'name')
  {%- endcall -%}
  {%- set former_key = historize._without_suffix(former_audit.identifier | lower, '_audit') ~ '_key' -%}
  {%- for suffix in ['_old', '_new'] -%}
    {%- call statement('rename_audit_key' ~ suffix) -%}
      alter table {{ audit_relation }}
      rename column {{ adapter.quote(former_key ~ suffix) }} to {{ adapter.quote(cfg.version_key ~ suffix) }}
    {%- endcall -%}
  {%- endfor -%}
{% endmacro %}
