{#- Reads and validates every fivetran_history option in one place. -#}
{% macro _fivetran_history_config() %}
  {%- set tmax = historize._read_option('tmax', '9999-12-31 23:59:59.999') | string -%}
  {%- if execute and not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,6})?$', tmax) -%}
    {{ exceptions.raise_compiler_error("historize: option 'tmax' is '" ~ tmax ~ "'; expected 'YYYY-MM-DD HH:MM:SS[.fff]'") }}
  {%- endif -%}
  {%- set unmodified = historize._read_option('unmodified_string', '__fivetran_unmodified__') -%}
  {%- if execute and (unmodified is not string or unmodified == '') -%}
    {{ exceptions.raise_compiler_error("historize: option 'unmodified_string' is '" ~ unmodified ~ "'; expected a non-empty string") }}
  {%- endif -%}
  {{ return({
      'model_name': model.name,
      'unique_key': historize._as_column_list('unique_key', historize._read_option('unique_key')),
      'op_column': historize._read_option('op_column', '_fivetran_op') | lower,
      'unmodified_string': unmodified,
      'tmax_sql': "timestamp'" ~ tmax ~ "+00:00'",
      'start': '_fivetran_start',
      'end': '_fivetran_end',
      'active': '_fivetran_active',
      'synced': '_fivetran_synced',
      'operations': ['upsert', 'update', 'delete'],
  }) }}
{% endmacro %}


{#- The table's type of each data column: the model YAML's data_type when it
    has one (Fivetran's files carry every value as a string), else the select's. -#}
{% macro _fivetran_history_column_types(select_columns) %}
  {%- set types = {} -%}
  {%- for column in select_columns -%}
    {%- set documented = (model.columns.get(column.name) or model.columns.get(column.name | lower) or {}) -%}
    {%- set data_type = documented.get('data_type') if documented is mapping else documented.data_type -%}
    {%- do types.update({column.name | lower: data_type or column.data_type}) -%}
  {%- endfor -%}
  {{ return(types) }}
{% endmacro %}
