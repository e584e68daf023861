{#- Joins each row of `facts` to the version of `history` valid at the fact's
    `event_time` (a column of facts): the as-of join. Keeps every fact (a left
    join); `columns` of the version are added, named `prefix` ~ column.
    `unique_key` defaults to the key a historize table records; `fact_key`
    names the facts' key columns when they differ from it. A bitemporal
    history is joined as currently believed. -#}
{% macro as_of_join(facts, history, event_time, unique_key=none, columns=none, fact_key=none, prefix='',
                    valid_from=none, valid_to=none, open_when=none, interval=none) %}
  {{- return(adapter.dispatch('as_of_join', 'historize')(facts, history, event_time, unique_key, columns,
      fact_key, prefix, valid_from, valid_to, open_when, interval)) -}}
{% endmacro %}

{% macro default__as_of_join(facts, history, event_time, unique_key, columns, fact_key, prefix, valid_from,
                             valid_to, open_when, interval) %}
  {{ historize._assert_given('as_of_join', history, {'facts': facts, 'event_time': event_time, 'columns': columns}) }}
  {%- set conv = historize._history_conventions(history, 'as_of_join', unique_key=unique_key, valid_from=valid_from,
        valid_to=valid_to, open_when=open_when, interval=interval, alias='v') -%}
  {%- set added = historize._as_name_list('columns', columns) -%}
  {%- set fact_keys = historize._as_name_list('fact_key', fact_key) or conv.unique_key -%}
  {%- if execute and fact_keys | length != conv.unique_key | length -%}
    {{ exceptions.raise_compiler_error("historize: as_of_join: fact_key " ~ fact_keys | join(', ') ~ " and the key of "
        ~ history ~ " (" ~ conv.unique_key | join(', ') ~ ") differ in length") }}
  {%- endif -%}
    select
        f.*{% for column in added %},
        v.{{ historize._quote(column) }} as {{ historize._quote(prefix ~ column) }}
        {%- endfor %}
    from {{ facts }} as f
    left join {{ history }} as v
        on {{ historize._key_join(fact_keys, 'f', 'v', conv.unique_key) }}
        and f.{{ historize._quote(event_time) }} >= v.{{ historize._quote(conv.valid_from) }}
        and ({{ conv.open_sql }} or f.{{ historize._quote(event_time) }} {{ '<' if conv.interval == 'half_open' else '<=' }} v.{{ historize._quote(conv.valid_to) }})
        {%- if conv.belief_sql %}
        and {{ conv.belief_sql }}
        {%- endif %}
{% endmacro %}
