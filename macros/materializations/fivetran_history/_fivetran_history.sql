{#- Reads and validates every fivetran_history option in one place, and names
    the table's technical columns once. -#}
{% macro _fivetran_history_config() %}
  {%- set cfg = historize._history_config('fivetran_history', {
      'delta.columnMapping.mode': 'name',
      'delta.enableRowTracking': 'true',
  }) -%}
  {%- set tmax = historize._timestamp_text("option 'tmax'", historize._read_option('tmax', '9999-12-31 23:59:59.999')) -%}
  {%- set unmodified = historize._read_option('unmodified_string', '__fivetran_unmodified__') -%}
  {%- if execute and (unmodified is not string or unmodified == '') -%}
    {{ exceptions.raise_compiler_error("historize: option 'unmodified_string' is '" ~ unmodified ~ "'; expected a non-empty string") }}
  {%- endif -%}
  {%- do cfg.update({
      'op_column': historize._read_option('op_column', '_fivetran_op') | lower,
      'unmodified_string': unmodified,
      'tmax_sql': "timestamp'" ~ tmax ~ "+00:00'",
      'valid_from': '_fivetran_start',
      'valid_to': '_fivetran_end',
      'current_flag': '_fivetran_active',
      'synced': '_fivetran_synced',
      'operations': ['upsert', 'update', 'delete'],
  }) -%}
  {#- Written after the select's columns, in this order. -#}
  {%- do cfg.update({'technical_columns': [cfg.valid_from, cfg.valid_to, cfg.current_flag, cfg.synced]}) -%}
  {{ return(cfg) }}
{% endmacro %}


{#- The batch's columns as fivetran_history uses them, checked: `data` (the
    columns a version holds besides the key), `types` (the table's type of
    each: the model YAML's data_type when it has one, since Fivetran's files
    carry every value as a string; else the select's), `has_synced`. -#}
{% macro _fivetran_history_columns(cfg, select_columns) %}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {{ historize._assert_columns_present(cfg.unique_key, select_names, 'unique_key', cfg.model_name) }}
  {{ historize._assert_columns_present([cfg.valid_from], select_names, 'the event time', cfg.model_name) }}
  {{ historize._assert_columns_present([cfg.op_column], select_names, 'op_column', cfg.model_name) }}
  {%- set types = {} -%}
  {%- for column in select_columns -%}
    {%- set documented = (model.columns.get(column.name) or model.columns.get(column.name | lower) or {}) -%}
    {%- set data_type = documented.get('data_type') if documented is mapping else documented.data_type -%}
    {%- do types.update({column.name | lower: data_type or column.data_type}) -%}
  {%- endfor -%}
  {{ return({
      'data': historize._names_except(select_columns, cfg.unique_key + [cfg.op_column] + cfg.technical_columns),
      'types': types,
      'has_synced': cfg.synced in select_names,
  }) }}
{% endmacro %}


{#- Caches the batch (the checks and the change set's first step read it)
    and checks it: the key and the event time unique and not NULL, and every
    operation one of upsert, update or delete. -#}
{% macro _fivetran_history_check_batch(cfg, staged) %}
  {%- call statement('cache_batch') -%}cache table {{ staged }}{%- endcall -%}
  {{ historize._assert_unique_key(staged, cfg.unique_key + [cfg.valid_from], cfg.model_name,
        label='the key and ' ~ cfg.valid_from) }}
  {{ historize._fivetran_history_assert_operations(cfg, staged) }}
{% endmacro %}


{#- Fails on an operation other than upsert, update or delete, naming them:
    the most frequent first, ties by name (NULL last), the same every run. -#}
{% macro _fivetran_history_assert_operations(cfg, staged) %}
  {%- set op = historize._quote(cfg.op_column) -%}
  {%- set query -%}
    select
        cast({{ op }} as string) as op,
        count(*) as n
    from {{ staged }}
    where {{ op }} is null or lower({{ op }}) not in ('{{ cfg.operations | join("', '") }}')
    group by {{ op }}
    order by n desc, op asc nulls last
    limit 5
  {%- endset -%}
  {%- set rows = run_query(query).rows -%}
  {%- if rows | length > 0 -%}
    {%- set examples = [] -%}
    {%- for row in rows -%}
      {%- do examples.append(("NULL" if row[0] is none else "'" ~ row[0] ~ "'") ~ " x" ~ row[1]) -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ cfg.model_name ~ ": unknown operation in " ~ cfg.op_column ~ ": " ~ examples | join(', ')
        ~ "; allowed: " ~ cfg.operations | join(', ') ~ ". Nothing was written") }}
  {%- endif -%}
{% endmacro %}
