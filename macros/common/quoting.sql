{#- Names and values written into SQL: identifiers quoted, lists of them, key
    joins, and string literals. -#}

{#- A name as a Spark identifier: between backticks, a backtick in it doubled,
    so that any column name the select can hold (spaces, quotes, backticks,
    keywords) stays one identifier; qualified by `relation_alias` if given. -#}
{% macro _quote(name, relation_alias=none) %}
  {{- return((relation_alias ~ '.' if relation_alias else '') ~ '`' ~ (name | string) | replace('`', '``') ~ '`') -}}
{% endmacro %}


{#- "a.`x`, a.`y`": names quoted, optionally qualified and suffixed; with
    `lines`, one to a line (select targets). -#}
{% macro _column_list(names, relation_alias=none, suffix='', separator=', ', lines=false) %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- do parts.append(historize._quote(name, relation_alias) ~ suffix) -%}
  {%- endfor -%}
  {{- return(parts | join(',\n            ' if lines else separator)) -}}
{% endmacro %}


{#- "t.`a` = s.`b` and ...": a null-intolerant equi-join on key columns. -#}
{% macro _key_join(names, left_alias, right_alias, right_names=none) %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- set right = right_names[loop.index0] if right_names else name -%}
    {%- do parts.append(historize._quote(name, left_alias) ~ ' = ' ~ historize._quote(right, right_alias)) -%}
  {%- endfor -%}
  {{- return(parts | join(' and ')) -}}
{% endmacro %}


{#- A SQL string literal of `value`: backslashes and quotes escaped, so no
    value can end the literal. -#}
{% macro _string_literal(value) %}
  {{- return("'" ~ (value | string) | replace("\\", "\\\\") | replace("'", "\\'") ~ "'") -}}
{% endmacro %}
