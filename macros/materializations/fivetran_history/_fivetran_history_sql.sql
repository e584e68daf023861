{#- SQL builders of fivetran_history. Aliases: `batch` the staged batch of
    events, `hist` the history table, `chg` the change set.

    The batch is walked per key in _fivetran_start order with window functions,
    which gives every version the rules want for the keys of the batch. The
    MERGE then applies only the difference from the versions already there, so
    a replayed batch writes nothing and a batch is one commit. -#}

{#- The change set of a batch: every version the batch's events give their
    keys, compared with the versions already there. `_historize_action`: new
    (a version to insert), changed (a version whose values, end or flag
    differ), deleted (a version the batch replaces: a re-delivered event at
    another time), unchanged (left out). -#}
{% macro _fivetran_history_changes_sql(cfg, target, source, columns) %}
  {%- set keys, data_columns, q = cfg.unique_key, columns.data, historize._quote -%}
    with
    {{ historize._fivetran_history_batch_ctes(cfg, target, source, columns) }},
    {{ historize._fivetran_history_walk_ctes(cfg, columns) }},
    {{ historize._fivetran_history_versions_ctes(cfg, columns) }},
    compared as (
        select
            {%- for name in keys %}
            coalesce(wanted.{{ q(name) }}, affected.{{ q(name) }}) as {{ q(name) }},
            {%- endfor %}
            {%- for name in data_columns %}
            wanted.{{ q(name) }},
            {%- endfor %}
            coalesce(wanted.{{ q(cfg.valid_from) }}, affected.{{ q(cfg.valid_from) }}) as {{ q(cfg.valid_from) }},
            wanted.{{ q(cfg.valid_to) }},
            wanted.{{ q(cfg.current_flag) }},
            wanted.{{ q(cfg.synced) }},
            case
                when wanted.{{ q(cfg.valid_from) }} is null then 'deleted'
                when affected.{{ q(cfg.valid_from) }} is null then 'new'
                when {% for name in data_columns + [cfg.valid_to, cfg.current_flag, cfg.synced] -%}
                    wanted.{{ q(name) }} <=> affected.{{ q(name) }}{{ ' and ' if not loop.last }}
                    {%- endfor %} then 'unchanged'
                else 'changed'
            end as _historize_action
        from wanted
        full outer join affected
            on {{ historize._key_join(keys, 'wanted', 'affected') }}
            and wanted.{{ q(cfg.valid_from) }} = affected.{{ q(cfg.valid_from) }}
    )

    select *
    from compared
    where _historize_action <> 'unchanged'
{% endmacro %}


{#- The batch (typed, one row per event), and the versions already in the
    table for its keys: `existing`, and `base`, the latest one left once the
    versions from the key's earliest event on are set aside. -#}
{% macro _fivetran_history_batch_ctes(cfg, target, source, columns) %}
  {%- set keys, data_columns, q = cfg.unique_key, columns.data, historize._quote -%}
    batch as (
        select
            {%- for name in keys %}
            cast({{ q(name) }} as {{ columns.types[name] }}) as {{ q(name) }},
            {%- endfor %}
            {%- for name in data_columns %}
            {{ q(name) }},
            {%- endfor %}
            cast({{ q(cfg.valid_from) }} as timestamp) as _historize_event_at,
            lower({{ q(cfg.op_column) }}) as _historize_op,
            {% if columns.has_synced %}cast({{ q(cfg.synced) }} as timestamp){% else %}{{ historize.load_timestamp_sql() }}{% endif %} as _historize_synced
        from {{ source }}
    ),

    earliest as (
        select
            {{ historize._select_list(keys) }},
            min(_historize_event_at) as _historize_earliest
        from batch
        where _historize_op in ('upsert', 'update')
        group by {{ historize._column_list(keys) }}
    ),

    batch_keys as (
        {{ historize._select_distinct(keys) }}
        from batch
    ),

    existing as (
        select hist.*
        from {{ target }} as hist
        left semi join batch_keys on {{ historize._key_join(keys, 'hist', 'batch_keys') }}
    ),

    -- the latest version left once versions from `earliest` on are removed
    base_candidates as (
        select
            existing.*,
            earliest._historize_earliest,
            row_number() over (partition by {{ historize._column_list(keys, 'existing') }} order by existing.{{ q(cfg.valid_from) }} desc) as _historize_rank
        from existing
        left join earliest on {{ historize._key_join(keys, 'existing', 'earliest') }}
        where earliest._historize_earliest is null or existing.{{ q(cfg.valid_from) }} < earliest._historize_earliest
    ),

    base as (
        select
            *,
            {{ q(cfg.current_flag) }} or (_historize_earliest is not null and {{ q(cfg.valid_to) }} >= _historize_earliest) as _historize_is_current
        from base_candidates
        where _historize_rank = 1
    )
{%- endmacro %}


{#- The events that apply, walked per key in time order, with the latest value
    given for each column so far. -#}
{% macro _fivetran_history_walk_ctes(cfg, columns) %}
  {%- set keys, data_columns, q = cfg.unique_key, columns.data, historize._quote -%}
  {%- set by_key = 'partition by ' ~ historize._column_list(keys) ~ ' order by _historize_event_at' -%}
    -- a delete before the base version began has nothing to close
    events as (
        select
            batch.*,
            base.{{ q(cfg.valid_from) }} is not null as _historize_has_base,
            coalesce(base._historize_is_current, false) as _historize_base_is_current
        from batch
        left join base on {{ historize._key_join(keys, 'batch', 'base') }}
        where not (batch._historize_op = 'delete' and coalesce(batch._historize_event_at < base.{{ q(cfg.valid_from) }}, false))
    ),

    -- an update with no version at all before it is ignored: with no base
    -- version, only an upsert before it gives it one (an ignored update does not)
    counted as (
        select
            *,
            coalesce(sum(case when _historize_op = 'upsert' then 1 else 0 end)
                over ({{ by_key }} rows between unbounded preceding and 1 preceding), 0) as _historize_upserts_before
        from events
    ),

    applicable as (
        select
            *,
            lag(_historize_op) over ({{ by_key }}) as _historize_previous_op
        from counted
        where not (_historize_op = 'update' and not _historize_has_base and _historize_upserts_before = 0)
    ),

    -- a delete with no current version does nothing
    kept as (
        select *
        from applicable
        where _historize_op <> 'delete'
            or case when _historize_previous_op is null then _historize_base_is_current else _historize_previous_op <> 'delete' end
    ),

    walked as (
        select
            *,
            lead(_historize_op) over ({{ by_key }}) as _historize_next_op,
            lead(_historize_event_at) over ({{ by_key }}) as _historize_next_event_at,
            row_number() over ({{ by_key }}) as _historize_position
            {%- for name in data_columns %},
            -- the latest value given for the column so far (NULL when only unmodified)
            last_value(
                case when _historize_op <> 'delete' and not (cast({{ q(name) }} as string) <=> {{ historize._string_literal(cfg.unmodified_string) }})
                    then named_struct('v', cast({{ q(name) }} as {{ columns.types[name] }})) end,
                true
            ) over ({{ by_key }} rows between unbounded preceding and current row) as {{ q('_historize_given_' ~ loop.index0) }}
            {%- endfor %}
        from kept
    )
{%- endmacro %}


{#- The versions the walk wants (`wanted`), and the versions already in the
    table it may change (`affected`). -#}
{% macro _fivetran_history_versions_ctes(cfg, columns) %}
  {%- set keys, data_columns, q = cfg.unique_key, columns.data, historize._quote -%}
    new_versions as (
        select
            {{ historize._select_list(keys, 'walked') }},
            {%- for name in data_columns %}
            case when walked.{{ q('_historize_given_' ~ loop.index0) }} is null then base.{{ q(name) }}
                else walked.{{ q('_historize_given_' ~ loop.index0) }}.v end as {{ q(name) }},
            {%- endfor %}
            walked._historize_event_at as {{ q(cfg.valid_from) }},
            case
                when walked._historize_next_op is null then {{ cfg.tmax_sql }}
                when walked._historize_next_op = 'delete' then walked._historize_next_event_at
                else walked._historize_next_event_at - interval 1 millisecond
            end as {{ q(cfg.valid_to) }},
            walked._historize_next_op is null as {{ q(cfg.current_flag) }},
            walked._historize_synced as {{ q(cfg.synced) }}
        from walked
        left join base on {{ historize._key_join(keys, 'walked', 'base') }}
        where walked._historize_op <> 'delete'
    ),

    first_events as (
        select
            {{ historize._select_list(keys) }},
            _historize_op,
            _historize_event_at
        from walked
        where _historize_position = 1
    ),

    -- the base version, when current, ends where the first event begins
    closed_base as (
        select
            {{ historize._select_list(keys + data_columns + [cfg.valid_from], 'base') }},
            case when first_events._historize_op = 'delete' then first_events._historize_event_at
                else first_events._historize_event_at - interval 1 millisecond end as {{ q(cfg.valid_to) }},
            false as {{ q(cfg.current_flag) }},
            base.{{ q(cfg.synced) }}
        from base
        inner join first_events on {{ historize._key_join(keys, 'base', 'first_events') }}
        where base._historize_is_current
    ),

    wanted as (
        select * from new_versions
        union all
        select * from closed_base
    ),

    -- the versions already in the table that the batch may change
    affected as (
        select
            {{ historize._select_list(keys + data_columns + cfg.technical_columns, 'existing') }}
        from existing
        inner join earliest on {{ historize._key_join(keys, 'existing', 'earliest') }}
        where existing.{{ q(cfg.valid_from) }} >= earliest._historize_earliest
        union all
        select
            {{ historize._select_list(keys + data_columns + cfg.technical_columns, 'base') }}
        from base
        inner join first_events on {{ historize._key_join(keys, 'base', 'first_events') }}
        where base._historize_is_current
    )
{%- endmacro %}


{#- One row: the change set's counts by action. -#}
{% macro _fivetran_history_plan_sql(changes) %}
    select
        {{ historize._action_count_columns(['new', 'changed', 'deleted']) }}
    from {{ changes }}
{% endmacro %}


{#- One MERGE writes the difference: delete the replaced versions, update the
    changed ones, insert the new. -#}
{% macro _fivetran_history_merge_sql(cfg, target, changes, columns, guard=historize._no_guard()) %}
  {%- set keys = cfg.unique_key -%}
  {%- set data_columns = columns.data -%}
  {%- set written = data_columns + [cfg.valid_to, cfg.current_flag, cfg.synced] -%}
    {{ historize._guarded_merge_into(target, changes, guard) }}
    on {{ historize._key_join(keys, 'hist', 'chg') }}
        and hist.{{ historize._quote(cfg.valid_from) }} = chg.{{ historize._quote(cfg.valid_from) }}
    when matched and chg._historize_action = 'deleted' then delete
    when matched and chg._historize_action = 'changed' then update set
        {%- for name in written %}
        {{ historize._quote(name) }} = chg.{{ historize._quote(name) }}{{ ',' if not loop.last }}
        {%- endfor %}
    when not matched and chg._historize_action = 'new' then insert (
        {{ historize._column_list(historize._fivetran_history_table_columns(cfg, data_columns)) }}
    ) values (
        {{ historize._column_list(historize._fivetran_history_table_columns(cfg, data_columns), 'chg') }}
    )
{% endmacro %}


{% macro _fivetran_history_table_columns(cfg, data_columns) %}
  {{ return(cfg.unique_key + data_columns + cfg.technical_columns) }}
{% endmacro %}


{#- The table's (name, type) pairs, in table order. -#}
{% macro _fivetran_history_table_types(cfg, columns) %}
  {%- set pairs = [] -%}
  {%- for name in cfg.unique_key + columns.data -%}{%- do pairs.append((name, columns.types[name])) -%}{%- endfor -%}
  {%- do pairs.extend([(cfg.valid_from, 'timestamp'), (cfg.valid_to, 'timestamp'), (cfg.current_flag, 'boolean'),
        (cfg.synced, 'timestamp')]) -%}
  {{ return(pairs) }}
{% endmacro %}
