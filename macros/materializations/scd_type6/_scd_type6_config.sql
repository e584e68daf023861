{#- Reads and validates every scd_type6 option in one place; the checks that
    need the select's columns are in _scd_type6_assert_columns. -#}
{% macro _scd_type6_config() %}
  {%- set deletes = historize._read_option('deletes', 'close') -%}
  {{ historize._assert_one_of('deletes', deletes, ['close', 'ignore']) }}
  {%- set audit = historize._read_option('audit', false) -%}
  {{ historize._assert_one_of('audit', audit, [true, false]) }}
  {%- set type3 = historize._read_option('type3_columns', {}) -%}
  {%- set type3_map = {} -%}
  {%- if type3 is mapping -%}
    {%- for base, previous in type3.items() -%}{%- do type3_map.update({base | lower: previous | lower}) -%}{%- endfor -%}
  {%- else -%}
    {%- for base in historize._as_column_list('type3_columns', type3, required=false) -%}
      {%- do type3_map.update({base: 'previous_' ~ base}) -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return({
      'model_name': model.name,
      'unique_key': historize._as_column_list('unique_key', historize._read_option('unique_key')),
      'type0': historize._as_column_list('type0_columns', historize._read_option('type0_columns', []), required=false),
      'type1': historize._as_column_list('type1_columns', historize._read_option('type1_columns', []), required=false),
      'type3': type3_map,
      'deletes': deletes,
      'audit': audit,
      'actor': historize._read_option('actor', model.name) | string,
      'surrogate_key': (model.name ~ '_key') | lower,
      'sentinel_sql': "timestamp'9999-12-31 23:59:59+00:00'",
  }) }}
{% endmacro %}


{#- Checks against the select's columns; returns the Type 2 columns. -#}
{% macro _scd_type6_assert_columns(cfg, select_names) %}
  {%- set name = cfg.model_name -%}
  {{ historize._assert_columns_present(cfg.unique_key, select_names, 'unique_key', name) }}
  {{ historize._assert_columns_present(cfg.type0, select_names, 'type0_columns', name) }}
  {{ historize._assert_columns_present(cfg.type1, select_names, 'type1_columns', name) }}
  {{ historize._assert_columns_present(cfg.type3.keys() | list, select_names, 'type3_columns', name) }}
  {%- set twice = [] -%}
  {%- for column in cfg.type0 if column in cfg.type1 or column in cfg.unique_key -%}{%- do twice.append(column) -%}{%- endfor -%}
  {%- for column in cfg.type1 if column in cfg.unique_key -%}{%- do twice.append(column) -%}{%- endfor -%}
  {%- if twice -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": column(s) " ~ twice | join(', ')
        ~ " listed under two SCD types (unique_key, type0_columns, type1_columns)") }}
  {%- endif -%}
  {%- set reserved = ['effective_from', 'effective_to', 'current_flag', 'version', '_hash', cfg.surrogate_key] -%}
  {%- set type2 = [] -%}
  {%- for column in select_names if column not in cfg.unique_key + cfg.type0 + cfg.type1 + ['change_reason'] -%}
    {%- if column in reserved -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": the select has column " ~ column
          ~ ", which scd_type6 writes itself; rename it in the select") }}
    {%- endif -%}
    {%- do type2.append(column) -%}
  {%- endfor -%}
  {%- for base, previous in cfg.type3.items() -%}
    {%- if base not in type2 -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": type3_columns names " ~ base
          ~ ", which is not a Type 2 column (Type 2: " ~ type2 | join(', ') ~ ")") }}
    {%- endif -%}
    {%- if previous in select_names or previous in reserved -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": the previous-value column " ~ previous
          ~ " of " ~ base ~ " collides with a column of the select or of the table") }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(type2) }}
{% endmacro %}
