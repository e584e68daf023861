{#- A 64-bit hash (bigint) of a row's attribute columns, NULL-safe: xxHash64
    of a text that is unique per row. A stored hash is only ever compared
    with the same key's versions, so two different rows of a key take the
    same hash with a chance of 2^-64 per comparison (docs/scd2_hist.md,
    compact keys and hashes).

    Each non-NULL column contributes the token <len(name)>:<name><len(value)>:<value>;
    a NULL contributes nothing. Tokens are sorted by column name, so:
    - NULL -> value and value -> NULL change the hash, NULL -> NULL does not;
    - '' differs from NULL (an empty value still has its name in the token);
    - ('a|b', 'c') differs from ('a', 'b|c'): lengths delimit every part;
    - adding a column that holds NULL, or reordering columns, changes nothing,
      so a schema change alone creates no new versions.
    `columns`: dbt Column objects (their type picks the text form) or names. -#}
{% macro row_hash(columns, relation_alias=none) %}
  {{- return(adapter.dispatch('row_hash', 'historize')(columns, relation_alias)) -}}
{% endmacro %}

{% macro default__row_hash(columns, relation_alias) %}
  {%- set tokens = [] -%}
  {%- for column in columns | sort(attribute='name' if columns and columns[0] is not string else none) -%}
    {%- set name = (column if column is string else column.name) | lower -%}
    {%- set dtype = none if column is string else column.dtype -%}
    {#- As text that round-trips: complex types as JSON, binary as hex. -#}
    {%- set kind = (dtype or '') | lower -%}
    {%- set qualified = historize._quote(name, relation_alias) -%}
    {%- if kind.startswith('array') or kind.startswith('map') or kind.startswith('struct') -%}
      {%- set value = 'to_json(' ~ qualified ~ ')' -%}
    {%- elif kind == 'binary' -%}
      {%- set value = 'hex(' ~ qualified ~ ')' -%}
    {%- else -%}
      {%- set value = 'cast(' ~ qualified ~ ' as string)' -%}
    {%- endif -%}
    {%- set label = historize._string_literal((name | length) ~ ':' ~ name) -%}
    {%- do tokens.append("concat(" ~ label ~ ", cast(length(" ~ value ~ ") as string), ':', " ~ value ~ ")") -%}
  {%- endfor -%}
  {{- return("xxhash64(concat_ws(''" ~ (", " if tokens else "") ~ tokens | join(", ") ~ "))") -}}
{% endmacro %}
