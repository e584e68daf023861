{#- A bitemporal scd2_hist table (meta bitemporal: true, input 'changes'): every
    belief the table has held, each row a version as believed from the run that
    recorded it (recorded_at) until the run that stopped believing it
    (superseded_at, NULL while it is part of the current belief). See
    docs/bitemporal.md.

    The belief after a load is the history the events path's rules give from
    every event recorded so far, each key and sequence by the image recorded
    last (a correction replaces the one before it). A load goes as an events
    load does (_scd2_hist_events.sql): its events checked and recorded, pending,
    at the run's recorded time; its pending keys' belief rebuilt from their
    events; the difference with their current belief written in one MERGE
    (guarded); the events marked applied. The MERGE supersedes the believed rows
    the new belief no longer holds and records the rows it holds anew; rows it
    does not supersede are never rewritten. -#}


{#- The MERGE of a bitemporal load, from either input. `belief_steps` are the
    CTEs of its input that end in
      compared        per version start of each key the load may change, the
                      version of the new belief (as believed now, in the
                      columns `columns`; NULL: none starts there) beside the
                      row of the current belief it may replace
                      (`_historize_believed_key`; NULL: none), and
                      `_historize_comparison`: a version in both with the same
                      end, state and row_hash is unchanged; one only believed
                      is superseded; one only in the new belief is recorded;
                      one in both that differs is replaced (superseded and
                      recorded). _scd2_hist_compared_sql writes it from two
                      CTEs, current_belief and new_belief.
    then:
      historize_changes  a row to supersede (matched by its version key) or to
                      record (its own version key, kept from matching by its
                      action: a real key, not a NULL one, lets Spark spread
                      the inserts over the MERGE's tasks) for each: a
                      replaced version is both, so `compared` is read once
                      (Spark computes a CTE again at each read)
    Guarded by `guard` (_unchanged_since). The rows it supersedes are those of
    `scope`, a predicate on the table as `hist` that holds for every row the
    load may replace (so that Delta reads no partition outside it); by default
    the current belief. -#}
{% macro _scd2_hist_beliefs_merge_sql(cfg, history, columns, belief_steps, guard, scope=none) %}
  {%- set q = historize._quote -%}
  {%- set hist_current = q(cfg.superseded_at, 'hist') ~ ' is null' %}
    merge into {{ history }} as hist
    using (
        with {{ belief_steps | trim }},

        historize_changes as (
            select
                case when roles._historize_action = 'superseded' then compared._historize_believed_key
                    else compared.{{ q(cfg.version_key) }} end as _historize_merge_key,
                {%- for name in columns %}
                compared.{{ q(name) }},
                {%- endfor %}
                roles._historize_action
            from compared
            lateral view explode(
                case when compared._historize_comparison = 'replaced' then array('superseded', 'recorded')
                    else array(compared._historize_comparison) end
            ) roles as _historize_action
            where compared._historize_comparison <> 'unchanged'
        )

        {{ historize._guarded_rows_sql('historize_changes', guard) | trim | indent(4) }}
    ) as chg
    on hist.{{ q(cfg.version_key) }} = chg._historize_merge_key
        and chg._historize_action = 'superseded'
        and {{ scope or hist_current }}
    when matched and chg._historize_action = 'superseded' then update set
        {{ q(cfg.superseded_at) }} = {{ historize.recorded_at_sql() }}
    when not matched and chg._historize_action = 'recorded' then insert (
        {{ historize._column_list(columns) }}
    ) values (
        {{ historize._column_list(columns, 'chg') }}
    )
{% endmacro %}


{#- The CTE `compared` (_scd2_hist_beliefs_merge_sql) of two CTEs before it,
    joined by key and start:
      current_belief  the rows of the current belief (superseded_at NULL) the
                      load may replace
      new_belief      the versions that replace them, in the columns `columns` -#}
{% macro _scd2_hist_compared_sql(cfg, columns) %}
  {%- set keys, q = cfg.unique_key, historize._quote -%}
  {%- set compared_columns = [cfg.hash_column, cfg.valid_to, cfg.state] %}
        compared as (
            select
                {%- for name in columns %}
                new_belief.{{ q(name) }},
                {%- endfor %}
                current_belief.{{ q(cfg.version_key) }} as _historize_believed_key,
                case
                    when current_belief.{{ q(cfg.valid_from) }} is null then 'recorded'
                    when new_belief.{{ q(cfg.valid_from) }} is null then 'superseded'
                    when {% for name in compared_columns %}new_belief.{{ q(name) }} <=> current_belief.{{ q(name) }}{{ ' and ' if not loop.last }}{% endfor %}
                        then 'unchanged'
                    else 'replaced'
                end as _historize_comparison
            from new_belief
            full outer join current_belief
                on {{ historize._key_join(keys, 'new_belief', 'current_belief') }}
                    and new_belief.{{ q(cfg.valid_from) }} = current_belief.{{ q(cfg.valid_from) }}
        )
{% endmacro %}


{#- The belief steps of a load of events (_scd2_hist_beliefs_merge_sql):
      pending_keys    the keys with pending events
      current_belief  their rows of the current belief
      new_belief      their versions from every event recorded, as believed now
      compared        the two (_scd2_hist_compared_sql) -#}
{% macro _scd2_hist_event_beliefs_sql(cfg, history, events, business_columns, attributes) %}
  {%- set keys, q = cfg.unique_key, historize._quote %}
        pending_keys as (
            {{ historize._scd2_hist_pending_keys_sql(cfg, events) | indent(8) }}
        ),

        current_belief as (
            select hist.*
            from {{ history }} as hist
            left semi join pending_keys
                on {{ historize._key_join(keys, 'hist', 'pending_keys') }}
            where hist.{{ q(cfg.superseded_at) }} is null
        ),

        new_belief as (
            {{ historize._scd2_hist_versions_sql(cfg, events, business_columns, attributes, keys_of='pending_keys') | indent(8) }}
        ),

        {{ historize._scd2_hist_compared_sql(cfg, historize._scd2_hist_table_columns(cfg, business_columns)) | trim }}
{% endmacro %}


{#- The belief steps of a load of events in order (every pending event after
    every event recorded, all of them the batch's `batch_events`): no event
    can correct one recorded, so a key's new belief is its open version in the
    current belief continued with its new events, as the one-timeline load
    continues its open versions (_scd2_hist_events_continued_merge_sql), and
    its closed versions stay believed as they are:
      pending_keys    the keys with pending events
      current_belief  their open versions of the current belief (broadcast
                      keys for a batch of up to a million events)
      new_belief      those versions continued with the batch's events, as
                      believed now
      compared        the two (_scd2_hist_compared_sql) -#}
{% macro _scd2_hist_continued_beliefs_sql(cfg, history, events, business_columns, attributes, batch_events) %}
        pending_keys as (
            {{ historize._scd2_hist_pending_keys_sql(cfg, events) | indent(8) }}
        ),

        current_belief as (
            {{ historize._scd2_hist_pending_open_versions_sql(cfg, history, batch_events) | indent(8) }}
        ),

        new_belief as (
            {{ historize._scd2_hist_versions_sql(cfg, events, business_columns, attributes, keys_of='pending_keys',
                continued_from='current_belief') | indent(8) }}
        ),

        {{ historize._scd2_hist_compared_sql(cfg, historize._scd2_hist_table_columns(cfg, business_columns)) | trim }}
{% endmacro %}


{#- Fails a bitemporal load, before anything is written, whose recorded time
    would not move the table's forward: recorded_at older than the newest
    recorded time of the history table `history` and its events table
    `events` (none: it does not exist yet), or equal to it and recorded by
    another run (their order would be unknown). A rerun of the run that
    recorded it passes. -#}
{% macro _scd2_hist_check_recorded_at(cfg, history, events) %}
  {%- set newest = run_query(historize._scd2_hist_newest_recorded_sql(cfg, history, events)).rows[0] -%}
  {%- set recorded_at = historize.recorded_at() -%}
  {%- set newest_at = newest['newest_recorded'] -%}
  {%- set runs = fromjson(newest['newest_runs'] or '[]') -%}
  {%- if newest_at is none or recorded_at > newest_at -%}
    {{ return(none) }}
  {%- endif -%}
  {%- if recorded_at < newest_at -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": recorded_at " ~ recorded_at
        ~ " is older than " ~ newest_at ~ ", the newest recorded time of " ~ history
        ~ "; recorded time only moves forward. Nothing was written") }}
  {%- endif -%}
  {%- if historize.load_run_id() not in runs -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": recorded_at " ~ recorded_at
        ~ " is the newest recorded time of " ~ history ~ ", recorded by run " ~ runs | join(', ')
        ~ "; another run's recorded time must be later. Nothing was written") }}
  {%- endif -%}
{% endmacro %}


{#- The newest recorded time of a bitemporal table that is not older than the
    run's recorded time, in UTC as 'YYYY-MM-DD HH:MM:SS.ffffff'
    (`newest_recorded`, NULL for none), and the runs that recorded rows or
    events at it (`newest_runs`, JSON): of its events table `events`, of the
    current belief of `history` (a row recorded later and superseded already
    is read from when it was superseded). Only a recorded time at or after the
    run's can refuse it, so only those are read: Delta skips every file whose
    recorded times all come before it, which is every file of the loads
    before when the run is in order. -#}
{% macro _scd2_hist_newest_recorded_sql(cfg, history, events) %}
  {%- set q, recorded_at = historize._quote, historize.recorded_at_sql() %}
    with recorded as (
        {%- if events is not none %}
        select recorded_at, load_run_id
        from {{ events }}
        where recorded_at >= {{ recorded_at }}
        {%- endif %}
        {%- if events is not none and history is not none %}
        union all
        {%- endif %}
        {%- if history is not none %}
        select {{ q(cfg.recorded_at) }} as recorded_at, {{ q(cfg.load_run_id) }} as load_run_id
        from {{ history }}
        where {{ q(cfg.superseded_at) }} is null
            and {{ q(cfg.recorded_at) }} >= {{ recorded_at }}
        union all
        select max({{ q(cfg.superseded_at) }}), cast(null as string)
        from {{ history }}
        where {{ q(cfg.superseded_at) }} >= {{ recorded_at }}
        {%- endif %}
    ),

    newest as (
        select max(recorded_at) as recorded_at
        from recorded
    )

    select
        date_format(to_utc_timestamp(newest.recorded_at, current_timezone()), 'yyyy-MM-dd HH:mm:ss.SSSSSS')
            as newest_recorded,
        to_json(array_sort(collect_set(recorded.load_run_id))) as newest_runs
    from newest
    left join recorded
        on newest.recorded_at = recorded.recorded_at
    group by newest.recorded_at
{% endmacro %}
