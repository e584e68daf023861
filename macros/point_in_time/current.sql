{#- The current rows of a historize table, one per key alive now, with its key
    and attribute columns only: a Type 4 current table kept beside the
    history, as a model materialized as a table or a view. On scd2_hist it
    reads only the open versions' partition (version_ended_at is NULL), of a
    bitemporal table the current belief's.
    Usage: {{ config(materialized='table') }}
           select * from ({{ historize.current(ref('customer_hist')) }}) as c -#}
{% macro current(relation) %}
  {{- return(adapter.dispatch('current', 'historize')(relation)) -}}
{% endmacro %}

{% macro default__current(relation) %}
  {{ historize._assert_given('current', relation, {}) }}
  {%- set conv = historize._history_conventions(relation, 'current', needs_key=false) -%}
  {%- if not execute -%}
    {{ return('select * from ' ~ relation) }}
  {%- endif -%}
  {#- A table of no known kind was refused by _history_conventions, which names its columns.
      Compiled before the table's first load, its columns are not known yet: v.* stands for them. -#}
  {%- set hidden = conv.history_columns + [(relation.identifier | lower) ~ '_key'] -%}
    select {{ historize._column_list(conv.columns | reject('in', hidden) | list, 'v') if conv.columns is not none else 'v.*' }}
    from {{ relation }} as v
    where {{ conv.open_sql }}
        {%- if conv.belief_sql %}
        and {{ conv.belief_sql }}
        {%- endif %}
{% endmacro %}
