{#- The versions of `relation` valid at `at` (a SQL expression): one per key
    alive then; a key deleted before `at` is absent. Half-open tables answer
    valid_from <= at < valid_to, closed ones (Fivetran's) valid_from <= at <= valid_to.
    A table built by historize needs nothing more; for others give
    valid_from, valid_to and, as needed, open_when and interval.
    Usage: select * from ({{ historize.as_of(ref('x_hist'), "timestamp'2026-01-31 00:00:00'") }}) as v -#}
{% macro as_of(relation, at, valid_from=none, valid_to=none, open_when=none, interval=none) %}
  {{- return(adapter.dispatch('as_of', 'historize')(relation, at, valid_from, valid_to, open_when, interval)) -}}
{% endmacro %}

{% macro default__as_of(relation, at, valid_from, valid_to, open_when, interval) %}
  {{ historize._assert_given('as_of', relation, {'at': at}) }}
  {%- set conv = historize._history_conventions(relation, 'as_of', valid_from=valid_from, valid_to=valid_to,
        open_when=open_when, interval=interval, needs_key=false) -%}
    select v.*
    from {{ relation }} as v
    where v.{{ historize._quote(conv.valid_from) }} <= {{ at }}
        and ({{ conv.open_sql }} or {{ at }} {{ '<' if conv.interval == 'half_open' else '<=' }} v.{{ historize._quote(conv.valid_to) }})
{% endmacro %}
