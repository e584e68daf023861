{#- Reads and validates every scd_type6 option in one place, and names the
    table's technical columns once; the checks that need the select's columns
    are in _scd_type6_columns. -#}
{% macro _scd_type6_config() %}
  {%- set cfg = historize._history_config('scd_type6', {
      'delta.columnMapping.mode': 'name',
      'delta.enableRowTracking': 'true',
  }) -%}
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
  {%- do cfg.update({
      'type0': historize._as_column_list('type0_columns', historize._read_option('type0_columns', []), required=false),
      'type1': historize._as_column_list('type1_columns', historize._read_option('type1_columns', []), required=false),
      'type3': type3_map,
      'deletes': deletes,
      'audit': audit,
      'actor': historize._read_option('actor', model.name) | string,
      'valid_from': 'effective_from',
      'valid_to': 'effective_to',
      'current_flag': 'current_flag',
      'version': 'version',
      'change_reason': 'change_reason',
      'hash_column': '_hash',
      'open_end_sql': "timestamp'9999-12-31 23:59:59+00:00'",
      'audit_properties': {'delta.appendOnly': 'true', 'delta.columnMapping.mode': 'name'},
  }) -%}
  {#- Every load that writes closes, updates or inserts a current row. -#}
  {%- do cfg.update({'guard_scope': 'guarded.' ~ historize._quote(cfg.current_flag),
        'guard_newest': 'guarded.' ~ historize._quote(cfg.valid_from)}) -%}
  {#- Written after the select's columns and the Type 3 columns, in this order. -#}
  {%- do cfg.update({'technical_columns': [cfg.valid_from, cfg.valid_to, cfg.current_flag, cfg.version,
        cfg.change_reason, cfg.hash_column]}) -%}
  {{ return(cfg) }}
{% endmacro %}


{#- The select's columns as scd_type6 uses them, checked: `attributes` (all
    but the key and change_reason, in select order), `type2` (attributes of no
    other type), `types` (name to type), `has_reason`. -#}
{% macro _scd_type6_columns(cfg, select_columns) %}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {%- set name = cfg.model_name -%}
  {{ historize._assert_columns_present(cfg.unique_key, select_names, 'unique_key', name) }}
  {{ historize._assert_columns_present(cfg.type0, select_names, 'type0_columns', name) }}
  {{ historize._assert_columns_present(cfg.type1, select_names, 'type1_columns', name) }}
  {{ historize._assert_columns_present(cfg.type3.keys() | list, select_names, 'type3_columns', name) }}
  {%- set twice = cfg.type0 | select('in', cfg.type1 + cfg.unique_key) | list + cfg.type1 | select('in', cfg.unique_key) | list -%}
  {%- if twice -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": column(s) " ~ twice | join(', ')
        ~ " listed under two SCD types (unique_key, type0_columns, type1_columns)") }}
  {%- endif -%}
  {%- set reserved = [cfg.version_key] + cfg.technical_columns | reject('equalto', cfg.change_reason) | list -%}
  {%- set type2 = [] -%}
  {%- for column in select_names if column not in cfg.unique_key + cfg.type0 + cfg.type1 + [cfg.change_reason] -%}
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
  {%- set types = {} -%}
  {%- for column in select_columns -%}{%- do types.update({column.name | lower: column.data_type}) -%}{%- endfor -%}
  {{ return({
      'attributes': historize._names_except(select_columns, cfg.unique_key + [cfg.change_reason]),
      'type2': type2,
      'types': types,
      'has_reason': cfg.change_reason in select_names,
  }) }}
{% endmacro %}
