{#- The plan of an scd2_hist load and the statements that carry it out.
    With strategy 'merge' a load is its MERGE alone (plan_checks.sql);
    strategy 'ordered' runs the plan query first, for its steps' counts. -#}

{#- That MERGE: the change set of the select `source` computed, checked and
    written in one statement, guarded by the version `read` (none: no guard,
    to render it on its own), whose guard is one more aggregate of the scan
    that finds the newest instant, not a read of its own. With `rerun` (open
    versions began at this load_timestamp), it checks that they still hold
    the select's data. -#}
{% macro _scd2_hist_checked_merge_sql(cfg, history, staged, business_columns, read=none, rerun=true) %}
  {%- set guard = {'join': '', 'predicate': 'newest' ~ '._historize_unchanged'} if read else historize._no_guard() -%}
  {%- set checked = historize._guard_with_checks(
        historize._scd2_hist_changes_sql(cfg, history, staged, business_columns, scope_rows=false),
        historize._plan_checks_sql(cfg, history, staged, historize._scd2_hist_newest_sql(cfg, history, read),
            historize._scd2_hist_rerun_conflicts_sql(cfg, history, staged) if rerun else none, 'version', guard)) -%}
  {{ return(historize._scd2_hist_merge_sql(cfg, history, 'historize_changes', business_columns, guard=checked)) }}
{% endmacro %}


{#- One row of _rerun_conflict_columns: the open versions that began at this
    load_timestamp whose key the select now changes or leaves out. -#}
{% macro _scd2_hist_rerun_conflicts_sql(cfg, history, staged) %}
  {%- set keys = cfg.unique_key -%}
        select
            {{ historize._rerun_conflict_columns(keys | length, '_historize_open_started_at') }}
        from (
            select
                {%- for name in keys %}
                {{ historize._qualified(name, 'started') }} as {{ historize._quote('_historize_key_' ~ loop.index0) }},
                {%- endfor %}
                {{ historize._qualified(cfg.valid_from, 'started') }} as _historize_open_started_at,
                case
                    when src._historize_in_source is null then 'deleted'
                    when {{ historize._qualified(cfg.hash_column, 'src') }} <=> {{ historize._qualified(cfg.hash_column, 'started') }} then 'unchanged'
                    else 'changed'
                end as _historize_action
            from {{ history }} as started
            left join (
                select
                    {{ historize._select_list(keys + [cfg.hash_column], 'src_row') }},
                    true as _historize_in_source
                from {{ staged }} as src_row
            ) as src
                on {{ historize._key_join(keys, 'started', 'src') }}
            where {{ historize._qualified(cfg.valid_to, 'started') }} is null
                and {{ historize._qualified(cfg.valid_from, 'started') }} = {{ historize.load_timestamp_sql() }}
        ) as started_at_load
{% endmacro %}


{#- The counts by action of what that MERGE wrote, from Delta's result of it:
    each changed key updated one row and inserted one, each new key inserted
    one, each deleted key updated one and added one source row that wrote
    nothing, so the source rows beyond those updated and inserted are the
    deleted keys. -#}
{% macro _scd2_hist_merged_counts(merged) %}
  {%- if merged.affected == 0 -%}
    {{ return({'new': 0, 'changed': 0, 'changed_open': 0, 'deleted': 0}) }}
  {%- endif -%}
  {%- set deleted = merged.metrics['numSourceRows'] - merged.inserted - merged.updated -%}
  {%- set changed = merged.updated - deleted -%}
  {{ return({'new': merged.inserted - changed, 'changed': changed, 'changed_open': changed, 'deleted': deleted}) }}
{% endmacro %}


{#- A load's counts by action from a row holding them; `writes` is the keys
    it writes. -#}
{% macro _scd2_hist_counts(row, scope_rows) %}
  {{ return({
      'scope_rows': scope_rows,
      'new': row['new'] | int,
      'changed': row['changed'] | int,
      'changed_open': row['changed_open'] | int,
      'deleted': row['deleted'] | int,
      'writes': (row['new'] + row['changed'] + row['deleted']) | int,
  }) }}
{% endmacro %}


{#- The newest instant already in the table when it is after this load's
    load_timestamp (a load older than the table is refused), else one not
    after it: one row and column `newest_timestamp`. A closed version began
    before it ended, so it is the newest end or the newest start of an open
    version; the scan reads the open partition and the partitions of versions
    that ended after load_timestamp (none, for a load in time order), not the
    history. Given the guard's `read`, the same row carries the guard
    (`_historize_unchanged`) over the open versions it reads anyway. -#}
{% macro _scd2_hist_newest_sql(cfg, history, read=none) %}
  {%- set valid_to = 'guarded.' ~ historize._quote(cfg.valid_to) -%}
    select
        greatest(max({{ cfg.guard_newest }}) filter (where {{ cfg.guard_scope }}),
            max({{ valid_to }})) as newest_timestamp
        {%- if read %},
        {{ historize._unchanged_since_column(read, cfg, filtered=true) | indent(8) }} as _historize_unchanged
        {%- endif %}
    from {{ history }} as guarded
    where {{ cfg.guard_scope }} or {{ valid_to }} > {{ historize.load_timestamp_sql() }}
{% endmacro %}


{#- One row: the change set's counts by action (and of changed keys that have
    an open version to close), the rerun conflicts, the open versions the
    change set read (the guard's count), and the newest instant already in
    the table. -#}
{% macro _scd2_hist_plan_sql(cfg, history, changes) %}
  {%- set counted -%}
        select
            {{ historize._action_count_columns(['invalid', 'new', 'changed', 'deleted']) }},
            coalesce(sum(case when _historize_action = 'changed' and _historize_has_open then 1 else 0 end), 0) as changed_open,
            {{ historize._rerun_conflict_columns(cfg.unique_key | length, '_historize_open_started_at') }},
            {{ historize._scope_rows_column() }}
        from {{ changes }}
  {%- endset -%}
  {{ historize._plan_with_newest_instant(counted, historize._scd2_hist_newest_sql(cfg, history)) }}
{% endmacro %}


{#- Runs the plan query and checks it; fails on NULL or duplicate keys (found
    by the change set's own pass). Returns the counts by action. -#}
{% macro _scd2_hist_plan(cfg, history, changes) %}
  {%- set row = run_query(historize._scd2_hist_plan_sql(cfg, history, changes)).rows[0] -%}
  {{ historize._assert_valid_keys(row, changes, cfg) }}
  {{ historize._assert_plan_applicable(row, cfg, history, 'version') }}
  {{ return(historize._scd2_hist_counts(row, row['scope_rows'])) }}
{% endmacro %}


{#- The steps of a load with strategy 'ordered' that have rows to write, in
    their order (_scd2_hist_step_sql builds each). -#}
{% macro _scd2_hist_steps(plan) %}
  {%- set steps = [] -%}
  {%- for step, rows in [('close_changed', plan.changed_open), ('close_deleted', plan.deleted),
                         ('insert_changed', plan.changed), ('insert_new', plan.new)] if rows > 0 -%}
    {%- do steps.append(step) -%}
  {%- endfor -%}
  {{ return(steps) }}
{% endmacro %}
