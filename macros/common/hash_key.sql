{#- A deterministic surrogate key of an ordered list of SQL expressions (none
    of them NULL): the first 128 bits of the SHA-256 of their length-delimited
    text, as a 16-byte binary. 128 bits keep a collision among 10^12 versions
    below 10^-14 (docs/scd2_hist.md, compact keys and hashes); the hex text of
    the key is the first 32 hex digits of the SHA-256. -#}
{% macro hash_key(expressions) %}
  {{- return(adapter.dispatch('hash_key', 'historize')(expressions)) -}}
{% endmacro %}

{% macro default__hash_key(expressions) %}
  {%- set tokens = [] -%}
  {%- for expression in expressions -%}
    {%- set value = "cast(" ~ expression ~ " as string)" -%}
    {%- do tokens.append("cast(length(" ~ value ~ ") as string), ':', coalesce(" ~ value ~ ", '')") -%}
  {%- endfor -%}
  {{- return("unhex(left(sha2(concat(" ~ tokens | join(", ") ~ "), 256), 32))") -}}
{% endmacro %}


{#- A version key an earlier release stored as the hex text of the SHA-256,
    as hash_key gives it now: its first 32 hex digits as 16 bytes (so the new
    key's hex is a prefix of the old text, and a downstream table finds its
    versions). -#}
{% macro _hash_key_from_hex(column) %}
  {{- return('unhex(left(' ~ historize._quote(column) ~ ', 32))') -}}
{% endmacro %}
