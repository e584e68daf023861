{#- The plan of an scd2_hist load and the statements that carry it out. -#}

{#- One row: the change set's counts by action (and of changed keys that have
    an open version to close), the rerun conflicts, the open versions the
    change set read (the guard's count), and the newest instant already in
    the table. -#}
{% macro _scd2_hist_plan_sql(cfg, target, changes) %}
  {%- set counted -%}
        select
            {{ historize._action_count_columns(['invalid', 'new', 'changed', 'deleted']) }},
            coalesce(sum(case when _historize_action = 'changed' and _historize_has_open then 1 else 0 end), 0) as changed_open,
            {{ historize._rerun_conflict_columns(cfg.unique_key | length, '_historize_open_started_at') }},
            {{ historize._scope_rows_column() }}
        from {{ changes }}
  {%- endset -%}
  {#- A closed version began before it ended, so the newest instant is the
      newest end or the newest start of an open version: partition values and
      the open partition, not the history. -#}
  {%- set newest -%}
            select greatest(max(open_versions.started_at), max(hist.{{ historize._quote(cfg.valid_to) }})) as newest_timestamp
            from {{ target }} as hist
            cross join (
                select max(hist_open.{{ historize._quote(cfg.valid_from) }}) as started_at
                from {{ target }} as hist_open
                where hist_open.{{ historize._quote(cfg.valid_to) }} is null
            ) as open_versions
  {%- endset -%}
  {{ historize._plan_with_newest_instant(counted, newest) }}
{% endmacro %}


{#- Runs the plan query and checks it; fails on NULL or duplicate keys (found
    by the change set's own pass). Returns the counts by action. -#}
{% macro _scd2_hist_plan(cfg, target, changes) %}
  {%- set row = run_query(historize._scd2_hist_plan_sql(cfg, target, changes)).rows[0] -%}
  {{ historize._assert_valid_keys(row, changes, cfg) }}
  {{ historize._assert_plan_applicable(row, cfg, target, 'version') }}
  {{ return({
      'scope_rows': row['scope_rows'],
      'new': row['new'] | int,
      'changed': row['changed'] | int,
      'changed_open': row['changed_open'] | int,
      'deleted': row['deleted'] | int,
      'writes': (row['new'] + row['changed'] + row['deleted']) | int,
  }) }}
{% endmacro %}


{#- The statements of a load: one MERGE, or the four ordered steps (those with
    rows to write). -#}
{% macro _scd2_hist_statements(cfg, plan, target, changes, business_columns) %}
  {%- if cfg.strategy == 'merge' -%}
    {{ return([{'name': 'merge', 'builder': historize._scd2_hist_merge_sql,
                'args': [cfg, target, changes, business_columns]}]) }}
  {%- endif -%}
  {%- set counts = {'close_changed': plan.changed_open, 'close_deleted': plan.deleted,
                    'insert_changed': plan.changed, 'insert_new': plan.new} -%}
  {%- set statements = [] -%}
  {%- for step in ['close_changed', 'close_deleted', 'insert_changed', 'insert_new'] if counts[step] > 0 -%}
    {%- do statements.append({'name': step, 'builder': historize._scd2_hist_step_sql,
                              'args': [step, cfg, target, changes, business_columns]}) -%}
  {%- endfor -%}
  {{ return(statements) }}
{% endmacro %}
