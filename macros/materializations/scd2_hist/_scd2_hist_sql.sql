{#- SQL builders of scd2_hist. Aliases: `src` the staged select, `hist` the
    history table, `chg` the change set. -#}

{#- The select with its row_hash: taken from the select when it has one. -#}
{% macro _scd2_hist_source_sql(cfg, select_sql, attribute_columns, has_row_hash) %}
    select
        src.*{% if not has_row_hash %},
        {{ historize.row_hash(attribute_columns, 'src') }} as {{ adapter.quote(cfg.row_hash) }}{% endif %}
    from (
        {{ select_sql }}
    ) as src
{% endmacro %}


{#- The history table's columns, in order. -#}
{% macro _scd2_hist_table_columns(cfg, business_columns) %}
  {{ return([cfg.hist_key] + business_columns + historize._scd2_hist_technical_columns(cfg)) }}
{% endmacro %}


{#- Expressions of a new open version, in table column order, from a relation
    `alias` holding the select's columns. -#}
{% macro _scd2_hist_new_version_values(cfg, business_columns, alias, state_sql) %}
  {%- set key_expressions = [] -%}
  {%- for name in cfg.unique_key -%}
    {%- do key_expressions.append(historize._qualified(name, alias)) -%}
  {%- endfor -%}
  {%- do key_expressions.append(historize.load_timestamp_sql()) -%}
  {%- set values = [historize.hash_key(key_expressions)] -%}
  {%- for name in business_columns + [cfg.row_hash] -%}
    {%- do values.append(historize._qualified(name, alias)) -%}
  {%- endfor -%}
  {%- do values.extend([
      historize.load_timestamp_sql(),
      'cast(null as timestamp)',
      state_sql,
      historize.load_run_id_sql(),
      historize._loaded_at_sql(),
  ]) -%}
  {{ return(values) }}
{% endmacro %}


{% macro _scd2_hist_create_sql(cfg, target, source, business_columns) %}
    create table {{ target }}
    using delta
    {{ partition_cols(label="partitioned by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
    tblproperties (
    {%- for key, value in cfg.tblproperties.items() %}
        '{{ key }}' = '{{ value }}'{{ ',' if not loop.last }}
    {%- endfor %}
    )
    as
    select
    {%- set names = historize._scd2_hist_table_columns(cfg, business_columns) %}
    {%- for value in historize._scd2_hist_new_version_values(cfg, business_columns, 'src', "'new'") %}
        {{ value }} as {{ adapter.quote(names[loop.index0]) }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ source }} as src
{% endmacro %}


{#- Each key of the select or with an open version, classified against the
    table as it is now:
      invalid    a row of the select whose key is NULL or duplicated (the run
                 fails on it before writing; see _scd2_hist_plan)
      new        no open version (first seen, or back after a delete)
      changed    open version with another row_hash; or, after a run that
                 stopped between closing and inserting, closed as changed at
                 this load_timestamp with no open version
      deleted    open version, key absent from the select
      unchanged  open version with the same row_hash
    The key check rides on the join's own shuffle by key, so the select is
    read once. Being a view, it is re-read by every statement that uses it,
    which is what makes each ordered step safe to rerun. -#}
{% macro _scd2_hist_changes_sql(cfg, target, source, business_columns) %}
  {%- set keys = cfg.unique_key -%}
  {%- set first_key = keys[0] -%}
    with keyed_source as (
        select
            src.*,
            true as _historize_in_source,
            count(*) over (partition by {{ historize._column_list(keys, 'src') }}) as _historize_occurrences
        from {{ source }} as src
    ),

    open_versions as (
        select {{ historize._column_list(keys) }}, {{ adapter.quote(cfg.row_hash) }}, {{ adapter.quote(cfg.started_at) }}
        from {{ target }}
        where {{ adapter.quote(cfg.ended_at) }} is null
    ),

    closed_as_changed_by_this_load as (
        select distinct {{ historize._column_list(keys) }}
        from {{ target }}
        where {{ adapter.quote(cfg.ended_at) }} = {{ historize.load_timestamp_sql() }}
            and {{ adapter.quote(cfg.state) }} = 'changed'
    )

    select
        {%- for name in keys %}
        coalesce({{ historize._qualified(name, 'src') }}, {{ historize._qualified(name, 'open_versions') }}) as {{ adapter.quote('_historize_key_' ~ loop.index0) }},
        {%- endfor %}
        {{ historize._column_list(business_columns, 'src') }},
        {{ historize._qualified(cfg.row_hash, 'src') }},
        case
            when src._historize_in_source and ({{ historize._column_list(keys, 'src', suffix=' is null', separator=' or ') }} or src._historize_occurrences > 1) then 'invalid'
            when src._historize_in_source is null then 'deleted'
            when {{ historize._qualified(first_key, 'open_versions') }} is null
                then case when {{ historize._qualified(first_key, 'closed_as_changed_by_this_load') }} is null then 'new' else 'changed' end
            when {{ historize._qualified(cfg.row_hash, 'src') }} <=> {{ historize._qualified(cfg.row_hash, 'open_versions') }} then 'unchanged'
            else 'changed'
        end as _historize_action,
        {{ historize._qualified(first_key, 'open_versions') }} is not null as _historize_has_open,
        {{ historize._qualified(cfg.started_at, 'open_versions') }} as _historize_open_started_at
    from keyed_source as src
    full outer join open_versions
        on {{ historize._key_join(keys, 'src', 'open_versions') }}
    left join closed_as_changed_by_this_load
        on {{ historize._key_join(keys, 'src', 'closed_as_changed_by_this_load') }}
{% endmacro %}


{#- `changes` below is the change set without its unchanged keys, cached once
    per run (a write to the table invalidates the cache, so a later step
    re-reads the table as the earlier steps left it).

    One row: counts of the change set by what each step will do; the keys
    whose open version began at this very load_timestamp but no longer match
    the select (a rerun of a load over different data); and the newest instant
    already in the table (a load may not go back in time). -#}
{% macro _scd2_hist_plan_sql(cfg, target, changes) %}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set counted -%}
        select
            coalesce(sum(case when _historize_action = 'invalid' then 1 else 0 end), 0) as invalid,
            coalesce(sum(case when _historize_action = 'changed' and _historize_has_open then 1 else 0 end), 0) as close_changed,
            coalesce(sum(case when _historize_action = 'deleted' then 1 else 0 end), 0) as close_deleted,
            coalesce(sum(case when _historize_action = 'changed' then 1 else 0 end), 0) as insert_changed,
            coalesce(sum(case when _historize_action = 'new' then 1 else 0 end), 0) as insert_new,
            coalesce(sum(case when _historize_action in ('changed', 'deleted') and _historize_open_started_at = {{ at }} then 1 else 0 end), 0) as conflicts,
            concat_ws('; ', slice(collect_list(case when _historize_action in ('changed', 'deleted') and _historize_open_started_at = {{ at }}
                then concat('(', concat_ws(', ', {% for name in cfg.unique_key %}cast({{ adapter.quote('_historize_key_' ~ loop.index0) }} as string){{ ', ' if not loop.last }}{% endfor %}), ') ', _historize_action) end), 1, 5)) as conflict_examples
        from {{ changes }}
  {%- endset -%}
  {%- set newest = 'greatest(max(' ~ adapter.quote(cfg.started_at) ~ '), max(' ~ adapter.quote(cfg.ended_at) ~ '))' -%}
  {{ historize._plan_with_newest_instant(counted, target, newest) }}
{% endmacro %}


{#- All four effects in one MERGE, one commit. Each change row is exploded
    into the row that closes the open version (matched on the key) and the
    row that inserts the new version (a NULL key never matches). -#}
{% macro _scd2_hist_merge_sql(cfg, target, changes, business_columns) %}
  {%- set keys = cfg.unique_key -%}
    merge into {{ target }} as hist
    using (
        select
            {%- for name in keys %}
            case when role = 'close' then {{ adapter.quote('_historize_key_' ~ loop.index0) }} end as {{ adapter.quote('_historize_merge_key_' ~ loop.index0) }},
            {%- endfor %}
            chg.*
        from {{ changes }} as chg
        lateral view explode(
            case
                when _historize_action = 'changed' and _historize_has_open then array('close', 'insert')
                when _historize_action = 'deleted' then array('close')
                else array('insert')
            end
        ) roles as role
    ) as chg
    on {% for name in keys -%}
        {{ historize._qualified(name, 'hist') }} = {{ historize._qualified('_historize_merge_key_' ~ loop.index0, 'chg') }} and {% endfor -%}
        {{ historize._qualified(cfg.ended_at, 'hist') }} is null
    when matched and chg._historize_action = 'changed' then update set
        {{ historize._scd2_hist_close_assignments(cfg, 'changed') | indent(4) }}
    when matched and chg._historize_action = 'deleted' then update set
        {{ historize._scd2_hist_close_assignments(cfg, 'deleted') | indent(4) }}
    when not matched and chg._historize_action in ('new', 'changed') then insert (
        {{ historize._column_list(historize._scd2_hist_table_columns(cfg, business_columns)) }}
    ) values (
        {{ historize._scd2_hist_new_version_values(cfg, business_columns, 'chg', 'chg._historize_action') | join(',\n        ') }}
    )
{% endmacro %}


{% macro _scd2_hist_close_assignments(cfg, state) %}
        {{ adapter.quote(cfg.ended_at) }} = {{ historize.load_timestamp_sql() }},
        {{ adapter.quote(cfg.state) }} = '{{ state }}',
        {{ adapter.quote(cfg.load_run_id) }} = {{ historize.load_run_id_sql() }},
        {{ adapter.quote(cfg.loaded_at) }} = {{ historize._loaded_at_sql() }}
{% endmacro %}


{#- The seed's four steps, each its own statement and each safe to rerun:
    it re-reads the change set, which already reflects what earlier steps did.
    Open-source Delta rejects subqueries in UPDATE conditions, so the two
    closing steps are MERGEs. -#}
{% macro _scd2_hist_step_sql(step, cfg, target, changes, business_columns) %}
  {%- set keys = cfg.unique_key -%}
  {%- set key_names = [] -%}
  {%- for name in keys -%}{%- do key_names.append('_historize_key_' ~ loop.index0) -%}{%- endfor -%}
  {%- if step in ['close_changed', 'close_deleted'] -%}
    {%- set state = 'changed' if step == 'close_changed' else 'deleted' -%}
    merge into {{ target }} as hist
    using (
        select {{ historize._column_list(key_names) }}
        from {{ changes }}
        where _historize_action = '{{ state }}' and _historize_has_open
    ) as chg
    on {{ historize._key_join(keys, 'hist', 'chg', key_names) }}
        and {{ historize._qualified(cfg.ended_at, 'hist') }} is null
    when matched then update set
        {{ historize._scd2_hist_close_assignments(cfg, state) | indent(4) }}
  {%- else -%}
    {%- set state = 'changed' if step == 'insert_changed' else 'new' -%}
    insert into {{ target }} (
        {{ historize._column_list(historize._scd2_hist_table_columns(cfg, business_columns)) }}
    )
    select
        {{ historize._scd2_hist_new_version_values(cfg, business_columns, 'chg', "'" ~ state ~ "'") | join(',\n        ') }}
    from {{ changes }} as chg
    where chg._historize_action = '{{ state }}'
  {%- endif -%}
{% endmacro %}


{#- After a rename, retirement, reactivation or widening: the open versions'
    row_hash as the select's attribute columns now give it, so that the schema
    change alone opens no version. -#}
{% macro _scd2_hist_rehash_sql(cfg, target, attribute_columns) %}
    update {{ target }}
    set {{ adapter.quote(cfg.row_hash) }} = {{ historize.row_hash(attribute_columns) }}
    where {{ adapter.quote(cfg.ended_at) }} is null
{% endmacro %}
