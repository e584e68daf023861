{#- Every belief of a bitemporal table at once: the rows of one key that
    overlap in both business time (valid_from to valid_to) and recorded time
    (recorded_at to superseded_at; NULL ends are unbounded), and the rows whose
    recorded interval ends before it starts. Each row returned is a violation,
    with the key, both rows' intervals and what is wrong. -#}
{% test consistent_beliefs(model, unique_key=none) %}
  {%- set conv = historize._history_conventions(model, 'consistent_beliefs', unique_key=unique_key) -%}
  {%- if execute and not conv.bitemporal -%}
    {{ exceptions.raise_compiler_error("historize: consistent_beliefs: " ~ model ~ " is not bitemporal; it keeps one "
        ~ "belief, which the invariant tests check") }}
  {%- endif -%}
  {%- set keys = conv.unique_key -%}
  {%- set valid_from, valid_to = historize._quote(conv.valid_from), historize._quote(conv.valid_to) -%}
    with beliefs as (
        select
            {{ historize._column_list(keys, 'v', lines=true) }},
            v.{{ valid_from }} as valid_from,
            v.{{ valid_to }} as valid_to,
            v.recorded_at,
            v.superseded_at,
            row_number() over (
                partition by {{ historize._column_list(keys, 'v') }}
                order by v.recorded_at, v.{{ valid_from }}, v.{{ valid_to }}, v.superseded_at
            ) as belief_row
        from {{ model }} as v
    ),

    overlapping as (
        select
            {{ historize._column_list(keys, 'earlier', lines=true) }},
            earlier.valid_from,
            earlier.valid_to,
            earlier.recorded_at,
            earlier.superseded_at,
            later.valid_from as other_valid_from,
            later.valid_to as other_valid_to,
            later.recorded_at as other_recorded_at,
            later.superseded_at as other_superseded_at,
            'overlaps another row in business and recorded time' as violation
        from beliefs as earlier
        inner join beliefs as later
            on {{ historize._key_join(keys, 'earlier', 'later') }}
                and earlier.belief_row < later.belief_row
        where (earlier.valid_to is null or later.valid_from < earlier.valid_to)
            and (later.valid_to is null or earlier.valid_from < later.valid_to)
            and (earlier.superseded_at is null or later.recorded_at < earlier.superseded_at)
            and (later.superseded_at is null or earlier.recorded_at < later.superseded_at)
    ),

    ends_before_start as (
        select
            {{ historize._column_list(keys, 'beliefs', lines=true) }},
            beliefs.valid_from,
            beliefs.valid_to,
            beliefs.recorded_at,
            beliefs.superseded_at,
            cast(null as timestamp) as other_valid_from,
            cast(null as timestamp) as other_valid_to,
            cast(null as timestamp) as other_recorded_at,
            cast(null as timestamp) as other_superseded_at,
            'superseded before it was recorded' as violation
        from beliefs
        where beliefs.superseded_at < beliefs.recorded_at
    )

    select * from overlapping
    union all
    select * from ends_before_start
{% endtest %}
