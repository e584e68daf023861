{#- SQL builders of fivetran_history.

    The batch is walked per key in _fivetran_start order with window functions,
    which gives every version the rules want for the keys of the batch. The
    MERGE then applies only the difference from the versions already there, so
    a replayed batch writes nothing and a batch is one commit. -#}

{% macro _fivetran_history_plan_sql(cfg, target, source, data_columns, types, has_synced) %}
  {%- set keys = cfg.unique_key -%}
  {%- set k = historize._column_list(keys) -%}
  {%- set by_key = 'partition by ' ~ k ~ ' order by _ft_start' -%}
  {%- set q = adapter.quote -%}
    with batch as (
        select
            {%- for name in keys %}
            cast({{ q(name) }} as {{ types[name] }}) as {{ q(name) }},
            {%- endfor %}
            {%- for name in data_columns %}
            {{ q(name) }},
            {%- endfor %}
            cast({{ q(cfg.start) }} as timestamp) as _ft_start,
            lower({{ q(cfg.op_column) }}) as _ft_op,
            {% if has_synced %}cast({{ q(cfg.synced) }} as timestamp){% else %}{{ historize.load_timestamp_sql() }}{% endif %} as _ft_synced
        from {{ source }}
    ),

    earliest as (
        select {{ k }}, min(_ft_start) as _ft_earliest
        from batch
        where _ft_op in ('upsert', 'update')
        group by {{ k }}
    ),

    batch_keys as (
        select distinct {{ k }} from batch
    ),

    existing as (
        select t.*
        from {{ target }} as t
        left semi join batch_keys on {{ historize._key_join(keys, 't', 'batch_keys') }}
    ),

    -- the latest version left once versions from `earliest` on are removed
    base_candidates as (
        select
            e.*,
            x._ft_earliest,
            row_number() over (partition by {{ historize._column_list(keys, 'e') }} order by e.{{ q(cfg.start) }} desc) as _ft_rank
        from existing as e
        left join earliest as x on {{ historize._key_join(keys, 'e', 'x') }}
        where x._ft_earliest is null or e.{{ q(cfg.start) }} < x._ft_earliest
    ),

    base as (
        select
            *,
            {{ q(cfg.active) }} or (_ft_earliest is not null and {{ q(cfg['end']) }} >= _ft_earliest) as _ft_is_current
        from base_candidates
        where _ft_rank = 1
    ),

    -- a delete before the base version began has nothing to close
    events as (
        select
            b.*,
            base.{{ q(cfg.start) }} is not null as _ft_has_base,
            coalesce(base._ft_is_current, false) as _ft_base_is_current
        from batch as b
        left join base on {{ historize._key_join(keys, 'b', 'base') }}
        where not (b._ft_op = 'delete' and coalesce(b._ft_start < base.{{ q(cfg.start) }}, false))
    ),

    -- an update with no version at all before it is ignored: with no base
    -- version, only an upsert before it gives it one (an ignored update does not)
    counted as (
        select
            *,
            coalesce(sum(case when _ft_op = 'upsert' then 1 else 0 end)
                over ({{ by_key }} rows between unbounded preceding and 1 preceding), 0) as _ft_upserts_before
        from events
    ),

    applicable as (
        select *, lag(_ft_op) over ({{ by_key }}) as _ft_previous_op
        from counted
        where not (_ft_op = 'update' and not _ft_has_base and _ft_upserts_before = 0)
    ),

    -- a delete with no current version does nothing
    kept as (
        select *
        from applicable
        where _ft_op <> 'delete'
            or case when _ft_previous_op is null then _ft_base_is_current else _ft_previous_op <> 'delete' end
    ),

    walked as (
        select
            kept.*,
            lead(_ft_op) over ({{ by_key }}) as _ft_next_op,
            lead(_ft_start) over ({{ by_key }}) as _ft_next_start,
            row_number() over ({{ by_key }}) as _ft_position
            {%- for name in data_columns %},
            -- the latest value given for the column so far (NULL when only unmodified)
            last_value(
                case when _ft_op <> 'delete' and not (cast({{ q(name) }} as string) <=> '{{ cfg.unmodified_string }}')
                    then named_struct('v', cast({{ q(name) }} as {{ types[name] }})) end,
                true
            ) over ({{ by_key }} rows between unbounded preceding and current row) as {{ q('_ft_given_' ~ loop.index0) }}
            {%- endfor %}
        from kept
    ),

    new_versions as (
        select
            {{ historize._column_list(keys, 'w') }},
            {%- for name in data_columns %}
            case when w.{{ q('_ft_given_' ~ loop.index0) }} is null then base.{{ q(name) }}
                else w.{{ q('_ft_given_' ~ loop.index0) }}.v end as {{ q(name) }},
            {%- endfor %}
            w._ft_start as {{ q(cfg.start) }},
            case
                when w._ft_next_op is null then {{ cfg.tmax_sql }}
                when w._ft_next_op = 'delete' then w._ft_next_start
                else w._ft_next_start - interval 1 millisecond
            end as {{ q(cfg['end']) }},
            w._ft_next_op is null as {{ q(cfg.active) }},
            w._ft_synced as {{ q(cfg.synced) }}
        from walked as w
        left join base on {{ historize._key_join(keys, 'w', 'base') }}
        where w._ft_op <> 'delete'
    ),

    first_events as (
        select {{ k }}, _ft_op, _ft_start from walked where _ft_position = 1
    ),

    -- the base version, when current, ends where the first event begins
    closed_base as (
        select
            {{ historize._column_list(keys, 'base') }},
            {{ historize._column_list(data_columns, 'base') }},
            base.{{ q(cfg.start) }},
            case when f._ft_op = 'delete' then f._ft_start else f._ft_start - interval 1 millisecond end as {{ q(cfg['end']) }},
            false as {{ q(cfg.active) }},
            base.{{ q(cfg.synced) }}
        from base
        inner join first_events as f on {{ historize._key_join(keys, 'base', 'f') }}
        where base._ft_is_current
    ),

    wanted as (
        select * from new_versions
        union all
        select * from closed_base
    ),

    -- the versions already in the table that the batch may change
    affected as (
        select {{ historize._column_list(keys, 'e') }}, {{ historize._column_list(data_columns, 'e') }},
            e.{{ q(cfg.start) }}, e.{{ q(cfg['end']) }}, e.{{ q(cfg.active) }}, e.{{ q(cfg.synced) }}
        from existing as e
        inner join earliest as x on {{ historize._key_join(keys, 'e', 'x') }}
        where e.{{ q(cfg.start) }} >= x._ft_earliest
        union all
        select {{ historize._column_list(keys, 'base') }}, {{ historize._column_list(data_columns, 'base') }},
            base.{{ q(cfg.start) }}, base.{{ q(cfg['end']) }}, base.{{ q(cfg.active) }}, base.{{ q(cfg.synced) }}
        from base
        inner join first_events as f on {{ historize._key_join(keys, 'base', 'f') }}
        where base._ft_is_current
    ),

    compared as (
        select
            {%- for name in keys %}
            coalesce(wanted.{{ q(name) }}, affected.{{ q(name) }}) as {{ q(name) }},
            {%- endfor %}
            {%- for name in data_columns %}
            wanted.{{ q(name) }},
            {%- endfor %}
            coalesce(wanted.{{ q(cfg.start) }}, affected.{{ q(cfg.start) }}) as {{ q(cfg.start) }},
            wanted.{{ q(cfg['end']) }},
            wanted.{{ q(cfg.active) }},
            wanted.{{ q(cfg.synced) }},
            case
                when wanted.{{ q(cfg.start) }} is null then 'delete'
                when affected.{{ q(cfg.start) }} is null then 'insert'
                when {% for name in data_columns + [cfg['end'], cfg.active, cfg.synced] -%}
                    wanted.{{ q(name) }} <=> affected.{{ q(name) }}{{ ' and ' if not loop.last }}
                    {%- endfor %} then 'same'
                else 'update'
            end as _ft_action
        from wanted
        full outer join affected
            on {{ historize._key_join(keys, 'wanted', 'affected') }}
            and wanted.{{ q(cfg.start) }} = affected.{{ q(cfg.start) }}
    )

    select * from compared where _ft_action <> 'same'
{% endmacro %}


{% macro _fivetran_history_merge_sql(cfg, target, changes, data_columns) %}
  {%- set keys = cfg.unique_key -%}
  {%- set written = data_columns + [cfg['end'], cfg.active, cfg.synced] -%}
    merge into {{ target }} as t
    using {{ changes }} as chg
    on {{ historize._key_join(keys, 't', 'chg') }}
        and t.{{ adapter.quote(cfg.start) }} = chg.{{ adapter.quote(cfg.start) }}
    when matched and chg._ft_action = 'delete' then delete
    when matched and chg._ft_action = 'update' then update set
        {%- for name in written %}
        {{ adapter.quote(name) }} = chg.{{ adapter.quote(name) }}{{ ',' if not loop.last }}
        {%- endfor %}
    when not matched and chg._ft_action = 'insert' then insert (
        {{ historize._column_list(historize._fivetran_history_table_columns(cfg, data_columns)) }}
    ) values (
        {{ historize._column_list(historize._fivetran_history_table_columns(cfg, data_columns), 'chg') }}
    )
{% endmacro %}


{% macro _fivetran_history_table_columns(cfg, data_columns) %}
  {{ return(cfg.unique_key + data_columns + [cfg.start, cfg['end'], cfg.active, cfg.synced]) }}
{% endmacro %}


{% macro _fivetran_history_create_sql(cfg, target, data_columns, types) %}
    create table {{ target }} (
        {%- for name in cfg.unique_key + data_columns %}
        {{ adapter.quote(name) }} {{ types[name] }},
        {%- endfor %}
        {{ adapter.quote(cfg.start) }} timestamp,
        {{ adapter.quote(cfg['end']) }} timestamp,
        {{ adapter.quote(cfg.active) }} boolean,
        {{ adapter.quote(cfg.synced) }} timestamp
    )
    using delta
    {{ partition_cols(label="partitioned by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
    tblproperties (
        'delta.columnMapping.mode' = 'name',
        'delta.minReaderVersion' = '2',
        'delta.minWriterVersion' = '5'
    )
{% endmacro %}
