{#- What the loads of a bitemporal `relation` recorded and superseded after
    `since` (a SQL expression): each row recorded then, with change_kind
    'recorded', and each row superseded then, with change_kind 'superseded';
    change_at is when (its recorded_at or its superseded_at). A row recorded
    and superseded after `since` is in both. A correction shows as the rows it
    superseded and those it recorded in their place, at one change_at.
    Usage: select * from ({{ historize.recorded_since(ref('x_hist'), "timestamp'2026-02-01 00:00:00'") }}) as r -#}
{% macro recorded_since(relation, since) %}
  {{- return(adapter.dispatch('recorded_since', 'historize')(relation, since)) -}}
{% endmacro %}

{% macro default__recorded_since(relation, since) %}
  {{ historize._assert_given('recorded_since', relation, {'since': since}) }}
  {%- set conv = historize._history_conventions(relation, 'recorded_since', needs_key=false) -%}
  {%- if execute and not conv.bitemporal -%}
    {{ exceptions.raise_compiler_error("historize: recorded_since: " ~ relation ~ " is not bitemporal; it keeps no "
        ~ "record of what it believed when (a model with meta bitemporal: true does)") }}
  {%- endif %}
    select
        v.*,
        'recorded' as change_kind,
        v.recorded_at as change_at
    from {{ relation }} as v
    where v.recorded_at > {{ since }}
    union all
    select
        v.*,
        'superseded' as change_kind,
        v.superseded_at as change_at
    from {{ relation }} as v
    where v.superseded_at > {{ since }}
{% endmacro %}
