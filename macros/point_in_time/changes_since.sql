{#- What changed in `relation` after `since` (a SQL expression): each version
    that began after it, with change_kind 'new' (the key's first version, or
    its return after a delete) or 'changed'; and each key deleted after it,
    as its last version with change_kind 'deleted'. change_at is when.
    `unique_key` defaults to the key a historize table records. -#}
{% macro changes_since(relation, since, unique_key=none, valid_from=none, valid_to=none, open_when=none,
                       interval=none, step=none, deleted_when=none) %}
  {{- return(adapter.dispatch('changes_since', 'historize')(relation, since, unique_key, valid_from, valid_to,
      open_when, interval, step, deleted_when)) -}}
{% endmacro %}

{% macro default__changes_since(relation, since, unique_key, valid_from, valid_to, open_when, interval, step,
                               deleted_when) %}
  {{ historize._assert_given('changes_since', relation, {'since': since}) }}
  {%- set conv = historize._history_conventions(relation, 'changes_since', unique_key=unique_key, valid_from=valid_from,
        valid_to=valid_to, open_when=open_when, interval=interval, step=step, deleted_when=deleted_when) -%}
  {%- set hidden = ['_historize_valid_from', '_historize_valid_to', '_historize_is_open', '_historize_next_from',
        '_historize_prev_to', '_historize_prev_from', '_historize_position', '_historize_is_latest',
        '_historize_is_deleted'] -%}
    with versions as (
        {{ historize._history_versions_sql(relation, conv) | indent(4) }}
    ),

    began as (
        select
            versions.*,
            case
                when versions._historize_prev_from is not null and versions._historize_prev_to is not null
                    and versions._historize_valid_from = versions._historize_prev_to + {{ conv.step }} then 'changed'
                else 'new'
            end as change_kind,
            versions._historize_valid_from as change_at
        from versions
        where versions._historize_valid_from > {{ since }}
    ),

    deleted as (
        select
            versions.*,
            'deleted' as change_kind,
            versions._historize_valid_to as change_at
        from versions
        where versions._historize_is_deleted and versions._historize_valid_to > {{ since }}
    )

    select * except ({{ hidden | join(', ') }}) from began
    union all
    select * except ({{ hidden | join(', ') }}) from deleted
{% endmacro %}
