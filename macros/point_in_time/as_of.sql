{#- The versions of `relation` valid at `at` (a SQL expression): one per key
    alive then; a key deleted before `at` is absent. Of a bitemporal table, as
    believed at `known_at` (a SQL expression; none: the current belief): what a
    report run at `known_at` saw. Half-open tables answer
    valid_from <= at < valid_to, closed ones (Fivetran's) valid_from <= at <= valid_to.
    A table built by historize needs nothing more; for others give
    valid_from, valid_to and, as needed, open_when and interval.
    Usage: select * from ({{ historize.as_of(ref('x_hist'), "timestamp'2026-01-31 00:00:00'") }}) as v -#}
{% macro as_of(relation, at, known_at=none, valid_from=none, valid_to=none, open_when=none, interval=none) %}
  {{- return(adapter.dispatch('as_of', 'historize')(relation, at, known_at, valid_from, valid_to, open_when, interval)) -}}
{% endmacro %}

{% macro default__as_of(relation, at, known_at, valid_from, valid_to, open_when, interval) %}
  {{ historize._assert_given('as_of', relation, {'at': at}) }}
  {%- set conv = historize._history_conventions(relation, 'as_of', valid_from=valid_from, valid_to=valid_to,
        open_when=open_when, interval=interval, needs_key=false, known_at=known_at) -%}
    select v.*
    from {{ relation }} as v
    where {% if conv.belief_sql %}{{ conv.belief_sql }}
        and {% endif %}v.{{ historize._quote(conv.valid_from) }} <= {{ at }}
        and ({{ conv.open_sql }} or {{ at }} {{ '<' if conv.interval == 'half_open' else '<=' }} v.{{ historize._quote(conv.valid_to) }})
{% endmacro %}
