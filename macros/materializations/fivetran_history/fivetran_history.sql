{#- Fivetran history-mode table kept from batches of change events.
    See README.md, section fivetran_history. -#}
{% materialization fivetran_history, adapter='spark' %}
  {%- set cfg = historize._fivetran_history_config() -%}

  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set source_view = make_temp_relation(this, '__historize_batch').incorporate(type='view') -%}
  {%- set changes_view = make_temp_relation(this, '__historize_changes').incorporate(type='view') -%}
  {{ historize._assert_delta_table(existing_relation, cfg.model_name) }}

  {{ run_hooks(pre_hooks) }}

  {{ historize._log_full_refresh(cfg.model_name) }}

  {%- set select_columns = historize._stage_select(source_view, sql) -%}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {{ historize._assert_columns_present(cfg.unique_key, select_names, 'unique_key', cfg.model_name) }}
  {{ historize._assert_columns_present([cfg.start], select_names, 'the event time', cfg.model_name) }}
  {{ historize._assert_columns_present([cfg.op_column], select_names, 'op_column', cfg.model_name) }}
  {%- set has_synced = cfg.synced in select_names -%}
  {%- set data_columns = historize._names_except(select_columns,
        cfg.unique_key + [cfg.start, cfg.op_column, cfg.synced, cfg['end'], cfg.active]) -%}
  {%- set types = historize._fivetran_history_column_types(select_columns) -%}

  {%- call statement('cache_batch') -%}cache table {{ source_view }}{%- endcall -%}
  {{ historize._assert_unique_key(source_view, cfg.unique_key + [cfg.start], cfg.model_name,
        label='the key and _fivetran_start') }}
  {{ historize._fivetran_history_assert_operations(cfg, source_view) }}

  {%- if existing_relation is none -%}
    {%- call statement('create_table') -%}
      {{ historize._fivetran_history_create_sql(cfg, target_relation, data_columns, types) }}
    {%- endcall -%}
  {%- else -%}
    {#- Schema evolution: renames, widening, new and retired columns (no hash to
        bring in line: versions come from the events). -#}
    {%- set typed = [] -%}
    {%- for name in cfg.unique_key + data_columns -%}{%- do typed.append({'name': name, 'data_type': types[name]}) -%}{%- endfor -%}
    {%- set schema_plan = historize._schema_sync_plan(cfg.model_name, target_relation, typed,
          [cfg.start, cfg['end'], cfg.active, cfg.synced]) -%}
    {{ historize._schema_sync_apply(schema_plan, cfg.model_name, target_relation, cfg.start) }}
  {%- endif -%}

  {{ historize._uncache_view(changes_view) }}
  {%- call statement('cache_changes') -%}
    cache table {{ changes_view }} as
    {{ historize._fivetran_history_plan_sql(cfg, target_relation, source_view, data_columns, types, has_synced) }}
  {%- endcall -%}
  {%- set counts = run_query("select _ft_action, count(*) as n from " ~ changes_view ~ " group by _ft_action") -%}
  {%- set summary = {} -%}
  {%- for row in counts.rows -%}{%- do summary.update({row[0]: row[1]}) -%}{%- endfor -%}
  {%- if summary | length == 0 -%}
    {%- call noop_statement('main', 'OK 0 (no change)', 'OK', 0) -%}{%- endcall -%}
  {%- else -%}
    {%- call statement('main') -%}
      {{ historize._fivetran_history_merge_sql(cfg, target_relation, changes_view, data_columns) }}
    {%- endcall -%}
  {%- endif -%}
  {{ log("historize: " ~ cfg.model_name ~ ": " ~ summary.get('insert', 0) ~ " versions inserted, "
      ~ summary.get('update', 0) ~ " updated, " ~ summary.get('delete', 0) ~ " re-delivered removed", info=true) }}

  {{ historize._uncache_view(changes_view) }}
  {{ historize._uncache_view(source_view) }}

  {{ run_hooks(post_hooks) }}

  {%- do persist_docs(target_relation, model) -%}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro _fivetran_history_assert_operations(cfg, source) %}
  {%- set op = adapter.quote(cfg.op_column) -%}
  {%- set query -%}
    select cast({{ op }} as string) as op, count(*) as n
    from {{ source }}
    where {{ op }} is null or lower({{ op }}) not in ('{{ cfg.operations | join("', '") }}')
    group by {{ op }}
    order by n desc
    limit 5
  {%- endset -%}
  {%- set rows = run_query(query).rows -%}
  {%- if rows | length > 0 -%}
    {%- set examples = [] -%}
    {%- for row in rows -%}{%- do examples.append("'" ~ row[0] ~ "' x" ~ row[1]) -%}{%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ cfg.model_name ~ ": unknown operation in " ~ cfg.op_column ~ ": " ~ examples | join(', ')
        ~ "; allowed: " ~ cfg.operations | join(', ') ~ ". Nothing was written") }}
  {%- endif -%}
{% endmacro %}
