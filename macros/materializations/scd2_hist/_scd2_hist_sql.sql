{#- SQL builders of scd2_hist. Aliases: `src` the staged select, `hist` the
    history table, `chg` the change set. -#}

{#- The select with its row_hash: taken from the select when it has one. -#}
{% macro _scd2_hist_source_sql(cfg, select_sql, attribute_columns, has_row_hash) %}
    select
        src.*{% if not has_row_hash %},
        {{ historize.row_hash(attribute_columns, 'src') }} as {{ historize._quote(cfg.hash_column) }}{% endif %}
    from (
        {{ select_sql }}
    ) as src
{% endmacro %}


{#- The history table's columns, in order. -#}
{% macro _scd2_hist_table_columns(cfg, business_columns) %}
  {{ return([cfg.version_key] + business_columns + cfg.technical_columns) }}
{% endmacro %}


{#- Expressions of a new open version, in table column order, from a relation
    `alias` holding the select's columns. -#}
{% macro _scd2_hist_new_version_values(cfg, business_columns, alias, state_sql) %}
  {%- set values = [historize._version_key(cfg.unique_key, alias)] -%}
  {%- for name in business_columns + [cfg.hash_column] -%}
    {%- do values.append(historize._qualified(name, alias)) -%}
  {%- endfor -%}
  {%- do values.extend([
      historize.load_timestamp_sql(),
      'cast(null as timestamp)',
      state_sql,
      historize.load_run_id_sql(),
      historize._utc_literal(run_started_at),
  ]) -%}
  {{ return(values) }}
{% endmacro %}


{#- The first load: every row of the select as a new open version. -#}
{% macro _scd2_hist_first_load_sql(cfg, staged, business_columns) %}
    select
    {%- set names = historize._scd2_hist_table_columns(cfg, business_columns) %}
    {%- for value in historize._scd2_hist_new_version_values(cfg, business_columns, 'src', "'new'") %}
        {{ value }} as {{ historize._quote(names[loop.index0]) }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ staged }} as src
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
    Unchanged keys are left out. The key check rides on the join's own
    shuffle by key, so the select is read once. With `scope_rows`, each row
    carries the guard's count of open versions (_classified_with_scope_rows). -#}
{% macro _scd2_hist_changes_sql(cfg, history, staged, business_columns, scope_rows=true) %}
  {%- set keys = cfg.unique_key -%}
  {%- set first_key = keys[0] -%}
    with keyed_source as (
        select
            src.*,
            {{ historize._keyed_source_columns(keys, 'src') }}
        from {{ staged }} as src
    ),

    open_versions as (
        select
            {{ historize._select_list(keys + [cfg.hash_column, cfg.valid_from]) }}
        from {{ history }}
        where {{ historize._quote(cfg.valid_to) }} is null
    ),

    closed_as_changed_by_this_load as (
        {{ historize._select_distinct(keys) }}
        from {{ history }}
        where {{ historize._quote(cfg.valid_to) }} = {{ historize.load_timestamp_sql() }}
            and {{ historize._quote(cfg.state) }} = 'changed'
    ),

    classified as (
        select
            {{ historize._change_set_keys(keys, 'src', 'open_versions') }},
            {{ historize._select_list(business_columns + [cfg.hash_column], 'src') }},
            case
                when {{ historize._invalid_key_condition(keys, 'src') }} then 'invalid'
                when src._historize_in_source is null then 'deleted'
                when {{ historize._qualified(first_key, 'open_versions') }} is null
                    then case when {{ historize._qualified(first_key, 'closed_as_changed_by_this_load') }} is null then 'new' else 'changed' end
                when {{ historize._qualified(cfg.hash_column, 'src') }} <=> {{ historize._qualified(cfg.hash_column, 'open_versions') }} then 'unchanged'
                else 'changed'
            end as _historize_action,
            {{ historize._qualified(first_key, 'open_versions') }} is not null as _historize_has_open,
            {{ historize._qualified(cfg.valid_from, 'open_versions') }} as _historize_open_started_at,
            src._historize_occurrences
        from keyed_source as src
        full outer join open_versions
            on {{ historize._key_join(keys, 'src', 'open_versions') }}
        left join closed_as_changed_by_this_load
            on {{ historize._key_join(keys, 'src', 'closed_as_changed_by_this_load') }}
    )
  {%- set keep = "classified._historize_action <> 'unchanged'" -%}
  {%- if scope_rows %},

    {{ historize._classified_with_scope_rows(history, cfg.guard_scope, keep) }}
  {%- else %}
    select classified.*
    from classified
    where {{ keep }}
  {%- endif %}
{% endmacro %}


{#- All four effects in one MERGE, one commit: a changed key's row closes its
    open version and inserts the new one (split_merge.sql). A changed key
    with no open version (closed as changed at this load_timestamp by a run
    of strategy 'ordered' that stopped) is closed again, its row matching
    that closed version. A deleted key's second row (`counted`) writes
    nothing: it makes Delta's count of source rows tell the deleted keys from
    the changed ones (_scd2_hist_merged_counts). -#}
{% macro _scd2_hist_merge_sql(cfg, history, changes, business_columns, guard=historize._no_guard()) %}
  {%- set roles -%}
        case
            when _historize_action = 'changed' then array('update', 'insert')
            when _historize_action = 'deleted' then array('update', 'counted')
            else array('insert')
        end
  {%- endset -%}
  {%- set valid_to = historize._qualified(cfg.valid_to, 'hist') -%}
    {{ historize._split_merge_into(history, changes, cfg.unique_key, roles, guard) }}
        and ({{ valid_to }} is null or {{ valid_to }} = {{ historize.load_timestamp_sql() }})
        and ({{ valid_to }} is null) = chg._historize_has_open
    when matched and chg._historize_action = 'changed' then update set
        {{ historize._scd2_hist_close_assignments(cfg, 'changed') | indent(4) }}
    when matched and chg._historize_action = 'deleted' then update set
        {{ historize._scd2_hist_close_assignments(cfg, 'deleted') | indent(4) }}
    when not matched and chg._historize_role = 'insert' then insert (
        {{ historize._column_list(historize._scd2_hist_table_columns(cfg, business_columns)) }}
    ) values (
        {{ historize._scd2_hist_new_version_values(cfg, business_columns, 'chg', 'chg._historize_action') | join(',\n        ') }}
    )
{% endmacro %}


{% macro _scd2_hist_close_assignments(cfg, state) %}
        {{ historize._quote(cfg.valid_to) }} = {{ historize.load_timestamp_sql() }},
        {{ historize._quote(cfg.state) }} = '{{ state }}',
        {{ historize._quote(cfg.load_run_id) }} = {{ historize.load_run_id_sql() }},
        {{ historize._quote(cfg.loaded_at) }} = {{ historize._utc_literal(run_started_at) }}
{% endmacro %}


{#- The four ordered steps (close changed, close deleted, insert changed,
    insert new), each its own statement and each safe to rerun: a step run
    twice finds nothing left to do (closes match only open versions; a rerun
    of the load sees its own closes as `changed`). Delta rejects subqueries in
    UPDATE conditions, so the two closing steps are MERGEs. -#}
{% macro _scd2_hist_step_sql(step, cfg, history, changes, business_columns, guard=historize._no_guard()) %}
  {%- set keys = cfg.unique_key -%}
  {%- set key_names = [] -%}
  {%- for name in keys -%}{%- do key_names.append('_historize_key_' ~ loop.index0) -%}{%- endfor -%}
  {%- if step in ['close_changed', 'close_deleted'] -%}
    {%- set state = 'changed' if step == 'close_changed' else 'deleted' -%}
    merge into {{ history }} as hist
    using (
        select
            {{ historize._select_list(key_names, 'chg') }}
        from {{ changes }} as chg
        {{ guard.join }}
        where chg._historize_action = '{{ state }}' and chg._historize_has_open and {{ guard.predicate }}
    ) as chg
    on {{ historize._key_join(keys, 'hist', 'chg', key_names) }}
        and {{ historize._qualified(cfg.valid_to, 'hist') }} is null
    when matched then update set
        {{ historize._scd2_hist_close_assignments(cfg, state) | indent(4) }}
  {%- else -%}
    {%- set state = 'changed' if step == 'insert_changed' else 'new' -%}
    insert into {{ history }} (
        {{ historize._column_list(historize._scd2_hist_table_columns(cfg, business_columns)) }}
    )
    select
        {{ historize._scd2_hist_new_version_values(cfg, business_columns, 'chg', "'" ~ state ~ "'") | join(',\n        ') }}
    from {{ changes }} as chg
    {{ guard.join }}
    where chg._historize_action = '{{ state }}' and {{ guard.predicate }}
  {%- endif -%}
{% endmacro %}


{#- After a rename, retirement, reactivation or widening: the open versions'
    row_hash as the select's attribute columns now give it, so that the schema
    change alone opens no version. -#}
{% macro _scd2_hist_rehash_sql(cfg, history, attribute_columns) %}
    update {{ history }}
    set {{ historize._quote(cfg.hash_column) }} = {{ historize.row_hash(attribute_columns) }}
    where {{ historize._quote(cfg.valid_to) }} is null
{% endmacro %}
