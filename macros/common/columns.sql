{#- Column naming helpers shared by the materializations. -#}

{#- A name as a Spark identifier: between backticks, a backtick in it doubled,
    so that any column name the select can hold (spaces, quotes, backticks,
    keywords) stays one identifier. -#}
{% macro _quote(name) %}
  {{- return('`' ~ (name | string) | replace('`', '``') ~ '`') -}}
{% endmacro %}


{% macro _qualified(name, relation_alias=none) %}
  {{- return((relation_alias ~ '.' if relation_alias else '') ~ historize._quote(name)) -}}
{% endmacro %}


{#- "a.`x`, a.`y`": names quoted, optionally qualified and suffixed. -#}
{% macro _column_list(names, relation_alias=none, suffix='', separator=', ') %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- do parts.append(historize._qualified(name, relation_alias) ~ suffix) -%}
  {%- endfor -%}
  {{- return(parts | join(separator)) -}}
{% endmacro %}


{#- Select targets, one to a line. -#}
{% macro _select_list(names, relation_alias=none) %}
  {{- return(historize._column_list(names, relation_alias, separator=',\n            ')) -}}
{% endmacro %}


{#- "select distinct" and its targets: on the same line when there is one,
    else one to a line. -#}
{% macro _select_distinct(names, relation_alias=none) %}
  {{- return('select distinct ' ~ historize._column_list(names, relation_alias) if names | length == 1
      else 'select distinct\n            ' ~ historize._select_list(names, relation_alias)) -}}
{% endmacro %}


{#- "t.`a` = s.`b` and ...": a null-intolerant equi-join on key columns. -#}
{% macro _key_join(names, left_alias, right_alias, right_names=none) %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- set right = right_names[loop.index0] if right_names else name -%}
    {%- do parts.append(historize._qualified(name, left_alias) ~ ' = ' ~ historize._qualified(right, right_alias)) -%}
  {%- endfor -%}
  {{- return(parts | join(' and ')) -}}
{% endmacro %}


{#- The change set's key columns, `_historize_key_<i>`: the key of the select's
    row, or of the table's when the key is absent from the select. -#}
{% macro _change_set_keys(keys, source_alias, table_alias) %}
  {%- set parts = [] -%}
  {%- for name in keys -%}
    {%- do parts.append('coalesce(' ~ historize._qualified(name, source_alias) ~ ', ' ~ historize._qualified(name, table_alias)
        ~ ') as ' ~ historize._quote('_historize_key_' ~ loop.index0)) -%}
  {%- endfor -%}
  {{- return(parts | join(',\n        ')) -}}
{% endmacro %}


{#- The surrogate key of a version: a hash of the key's columns (of the
    relation `alias`) and the load_timestamp it began at. -#}
{% macro _version_key(keys, alias) %}
  {%- set expressions = [] -%}
  {%- for name in keys -%}{%- do expressions.append(historize._qualified(name, alias)) -%}{%- endfor -%}
  {%- do expressions.append(historize.load_timestamp_sql()) -%}
  {{- return(historize.hash_key(expressions)) -}}
{% endmacro %}


{#- Names of `columns` (dbt Column objects) not in `excluded`, in order. -#}
{% macro _names_except(columns, excluded) %}
  {%- set lowered = excluded | map('lower') | list -%}
  {%- set names = [] -%}
  {%- for column in columns if column.name | lower not in lowered -%}
    {%- do names.append(column.name | lower) -%}
  {%- endfor -%}
  {{- return(names) -}}
{% endmacro %}


{% macro _columns_named(columns, names) %}
  {%- set wanted = names | map('lower') | list -%}
  {%- set result = [] -%}
  {%- for column in columns if column.name | lower in wanted -%}
    {%- do result.append(column) -%}
  {%- endfor -%}
  {{- return(result) -}}
{% endmacro %}


{#- `text` without `prefix`, which it is known to carry. -#}
{% macro _without_prefix(text, prefix) %}
  {{- return(text[prefix | length:] if text.startswith(prefix) else text) -}}
{% endmacro %}

