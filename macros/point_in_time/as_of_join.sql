{#- Joins each row of `facts` to the version of `history` valid at the fact's
    `event_time` (a column of facts): the as-of join. Keeps every fact (a left
    join); `columns` of the version are added, named `prefix` ~ column.
    `fact_key` names the facts' key columns when they differ from `unique_key`. -#}
{% macro as_of_join(facts, history, event_time, unique_key, columns, fact_key=none, prefix='',
                    valid_from=none, valid_to=none, open_when=none, interval=none) %}
  {{- return(adapter.dispatch('as_of_join', 'historize')(facts, history, event_time, unique_key, columns,
      fact_key, prefix, valid_from, valid_to, open_when, interval)) -}}
{% endmacro %}

{% macro default__as_of_join(facts, history, event_time, unique_key, columns, fact_key, prefix, valid_from,
                             valid_to, open_when, interval) %}
  {%- set conv = historize._history_conventions(history, valid_from, valid_to, open_when, interval, alias='v') -%}
  {%- set keys = historize._as_column_list('unique_key', unique_key) -%}
  {%- set fact_keys = historize._as_column_list('fact_key', fact_key) if fact_key else keys -%}
    select
        f.*{% for column in historize._as_column_list('columns', columns) %},
        v.{{ adapter.quote(column) }} as {{ adapter.quote(prefix ~ column) }}
        {%- endfor %}
    from {{ facts }} as f
    left join {{ history }} as v
        on {{ historize._key_join(fact_keys, 'f', 'v', keys) }}
        and v.{{ adapter.quote(conv.valid_from) }} <= f.{{ adapter.quote(event_time) }}
        and ({{ conv.open_sql }} or f.{{ adapter.quote(event_time) }} {{ '<' if conv.interval == 'half_open' else '<=' }} v.{{ adapter.quote(conv.valid_to) }})
{% endmacro %}
