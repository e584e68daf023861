{#- sha256 hex of an ordered list of SQL expressions (none of them NULL), for
    deterministic surrogate keys. -#}
{% macro hash_key(expressions) %}
  {{- return(adapter.dispatch('hash_key', 'historize')(expressions)) -}}
{% endmacro %}

{% macro default__hash_key(expressions) %}
  {%- set tokens = [] -%}
  {%- for expression in expressions -%}
    {%- set value = "cast(" ~ expression ~ " as string)" -%}
    {%- do tokens.append("cast(length(" ~ value ~ ") as string), ':', coalesce(" ~ value ~ ", '')") -%}
  {%- endfor -%}
  {{- return("sha2(concat(" ~ tokens | join(", ") ~ "), 256)") -}}
{% endmacro %}
