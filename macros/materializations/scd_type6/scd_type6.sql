{#- One dimension with per-column SCD types 0, 1, 2 and 3, versions, a current
    flag and an audit trail. See docs/scd_type6.md and docs/how_a_load_runs.md. -#}
{% materialization scd_type6, adapter='spark' %}
  {%- set cfg = historize._scd_type6_config() -%}

  {#- A dimension that does not exist yet may be a renamed one (with its audit). -#}
  {%- set relations = historize._history_relations(cfg) -%}
  {%- set target_relation, existing_relation, staged_view = relations.history, relations.existing, relations.staged -%}
  {%- set audit_relation = this.incorporate(path={'identifier': this.identifier ~ '_audit'}, type='table') -%}
  {%- set existing_audit = load_cached_relation(audit_relation) if cfg.audit else none -%}
  {{ historize._assert_delta_table(existing_audit, cfg.model_name) }}
  {%- set former_audit = historize._scd_type6_former_audit(cfg, audit_relation) if cfg.audit and existing_audit is none else none -%}
  {%- set audit = {'relation': audit_relation, 'existing': existing_audit, 'former': former_audit} -%}

  {{ run_hooks(pre_hooks) }}

  {#- A select dbt reads in part (--empty, --sample) leaves the table as it is. -#}
  {%- set left_as_is = historize._left_as_is(cfg, relations) -%}
  {%- if left_as_is -%}
    {{ historize._report_left_as_is(left_as_is) }}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}

  {%- set select_columns = historize._stage_select(staged_view, sql) -%}
  {%- set columns = historize._scd_type6_columns(cfg, select_columns) -%}
  {#- The dimension and its audit made ready: created, renamed with a former name, or
      brought in line with the select. -#}
  {{ historize._scd_type6_ready_tables(cfg, relations, audit, select_columns, columns) }}

  {#- The load is the dimension's MERGE, which computes the change set, checks it and
      writes it; its one read of the dimension is its own, which Delta's commit fails if
      another run wrote what it read. With an audit, the audit's MERGE comes first, from
      the same change set: both are guarded by one read of the dimension, so that a run
      killed between them ends correct when rerun. -#}
  {%- set read = historize._read_version(target_relation, historize._quote(cfg.current_flag, 'guarded')) if cfg.audit else none -%}
  {{ historize._write_per_task(cfg, true) }}
  {%- if cfg.audit -%}
    {%- call statement('audit') -%}
      {{ historize._scd_type6_audit_merge_sql(cfg, audit_relation, target_relation, staged_view, columns, read) }}
    {%- endcall -%}
  {%- endif -%}
  {%- call statement('main', fetch_result=true) -%}
    {{ historize._scd_type6_merge_sql(cfg, target_relation, staged_view, columns, read) }}
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

  {{ return({'relations': [target_relation] + ([audit_relation] if cfg.audit else [])}) }}
{% endmaterialization %}


{#- The dimension and its audit made ready before its load: the dimension created, or
    its columns and version keys brought in line with the select; the audit created,
    renamed along with a former name, or its version key columns following the
    dimension's. Keys are checked here when a table is created or changed first;
    otherwise the change set checks them, in its one read of the select. -#}
{% macro _scd_type6_ready_tables(cfg, relations, audit, select_columns, columns) %}
  {%- if relations.found.relation is not none -%}
    {%- set table_sync = historize._plan_table_sync(cfg, relations.found,
          historize._columns_named(select_columns, cfg.unique_key + columns.attributes),
          [cfg.version_key] + cfg.type3.values() | list + cfg.technical_columns) -%}
  {%- endif -%}
  {%- if relations.found.relation is none or table_sync.alters_table or (cfg.audit and audit.existing is none) -%}
    {{ historize._assert_unique_key(relations.staged, cfg.unique_key, cfg.model_name) }}
  {%- endif -%}
  {%- if relations.found.relation is none -%}
    {%- call statement('create_' ~ relations.history.identifier) -%}
      {{ historize._create_history_table_sql(relations.history, historize._history_properties(cfg),
          columns=columns.table_types) }}
    {%- endcall -%}
    {%- do adapter.cache_added(relations.history) -%}
  {%- else -%}
    {#- Its audit's version keys compact before the dimension's, so that a run killed
        between the two finds the dimension's still to do, and the audit checked again. -#}
    {%- if table_sync.plan.reformat and audit.existing is not none -%}
      {{ historize._scd_type6_sync_audit(cfg, audit.relation) }}
    {%- endif -%}
    {%- if table_sync.alters_table or table_sync.plan.rehash -%}
      {{ historize._sync_history_table(cfg, relations.found, relations.history, table_sync,
          (cfg.type3.values() | list + cfg.technical_columns)[0],
          hash_sql=historize.row_hash(columns.type2), current_rows=historize._quote(cfg.current_flag)) }}
    {%- endif -%}
  {%- endif -%}
  {%- if audit.former is not none -%}
    {{ historize._rename_table(audit.former, audit.relation, cfg.model_name) }}
  {%- elif cfg.audit and audit.existing is none -%}
    {%- call statement('create_' ~ audit.relation.identifier) -%}
      {{ historize._create_history_table_sql(audit.relation, cfg.audit_properties,
          columns=columns.audit_types, for_model=false) }}
    {%- endcall -%}
    {%- do adapter.cache_added(audit.relation) -%}
  {%- endif -%}
  {%- if cfg.audit and cfg.former_names and (audit.existing is not none or audit.former is not none) -%}
    {{ historize._scd_type6_sync_audit(cfg, audit.relation) }}
  {%- endif -%}
{% endmacro %}


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


{#- The audit's version key columns are named after the dimension: after a
    rename from a former name they follow it, also when a run killed after
    renaming the audit table left them under the former name. Keys an earlier
    release stored as hex text are rewritten compact, as the dimension's. -#}
{% macro _scd_type6_sync_audit(cfg, audit_relation) %}
  {%- set columns = adapter.get_columns_in_relation(audit_relation) -%}
  {%- set names = columns | map(attribute='name') | map('lower') | list -%}
  {%- set renamed_to = {} -%}
  {%- for former in cfg.former_names -%}
    {%- for suffix in ['_old', '_new'] if (former ~ '_key' ~ suffix) in names and (cfg.version_key ~ suffix) not in names -%}
      {%- do renamed_to.update({former ~ '_key' ~ suffix: cfg.version_key ~ suffix}) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- if renamed_to -%}
    {#- Renaming a column needs column mapping (an audit table of an earlier version may lack it). -#}
    {%- call statement('audit_column_mapping') -%}
      alter table {{ audit_relation }} set tblproperties ('delta.columnMapping.mode' = 'name')
    {%- endcall -%}
  {%- endif -%}
  {%- for old, new in renamed_to.items() -%}
    {%- call statement('rename_audit_' ~ new) -%}
      alter table {{ audit_relation }}
      rename column {{ historize._quote(old) }} to {{ historize._quote(new) }}
    {%- endcall -%}
  {%- endfor -%}
  {%- set converted = {} -%}
  {%- for column in columns if column.data_type | lower == 'string' -%}
    {%- set name = renamed_to.get(column.name | lower, column.name | lower) -%}
    {%- if name in [cfg.version_key ~ '_old', cfg.version_key ~ '_new'] -%}
      {%- do converted.update({name: historize._hash_key_from_hex(name)}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if converted -%}
    {{ log("historize: " ~ cfg.model_name ~ ": rewriting " ~ audit_relation ~ ", " ~ converted.keys() | join(' and ') ~ " stored compact", info=true) }}
    {#- An append-only table refuses a REPLACE; the REPLACE sets the property again. -#}
    {%- call statement('audit_append_only_off') -%}
      alter table {{ audit_relation }} set tblproperties ('delta.appendOnly' = 'false')
    {%- endcall -%}
    {{ historize._rewrite_table(audit_relation, cfg.audit_properties, converted, for_model=false) }}
  {%- endif -%}
{% endmacro %}
