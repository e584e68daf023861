{#- Column naming helpers shared by the materializations. -#}

{% macro _qualified(name, relation_alias=none) %}
  {{- return((relation_alias ~ '.' if relation_alias else '') ~ adapter.quote(name)) -}}
{% endmacro %}


{#- "a.`x`, a.`y`": names quoted, optionally qualified and suffixed. -#}
{% macro _column_list(names, relation_alias=none, suffix='', separator=', ') %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- do parts.append(historize._qualified(name, relation_alias) ~ suffix) -%}
  {%- endfor -%}
  {{- return(parts | join(separator)) -}}
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


{#- Drops a session view and its cached data, left over or done with. (DROP
    VIEW uncaches without resolving the view, which may name a dropped table.) -#}
{% macro _uncache_view(relation) %}
  {%- call statement('drop_' ~ relation.identifier) -%}
    drop view if exists {{ relation }}
  {%- endcall -%}
{% endmacro %}
