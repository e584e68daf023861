{#- scd2_hist, path `ordered`: a snapshot in time order, strategy 'ordered'. The
    change set is cached at the version the run read, the plan query counts and
    checks it, then each step with rows to write runs as its own statement, the
    last one the load's main statement. Each step guards against writers since
    the version read before it. -#}

{#- The change set and its plan, then every step but the last. The plan query
    counts the change set by action, and fails on NULL or duplicate keys (found
    by the change set's own pass), a load older than the table, or a rerun over
    other data. `load` gets the plan, the steps and the version the last step
    guards against. -#}
{% macro _scd2_hist_ordered_prepare(load) %}
  {%- set cfg, history, relations = load.cfg, load.history, load.relations -%}
  {%- set open_versions = historize._quote(cfg.valid_to, 'guarded') ~ ' is null' -%}
  {%- set read = historize._read_version(history, open_versions, counted=false) -%}
  {{ historize._stage_change_set(relations,
      historize._scd2_hist_changes_sql(cfg, read.snapshot, relations.staged, load.columns.business)) }}
  {%- set plan = run_query(historize._scd2_hist_plan_sql(cfg, history, relations.change_set)).rows[0] -%}
  {{ historize._assert_plan(plan, cfg, history, relations.change_set, 'version') }}
  {%- set steps = [] -%}
  {%- for step, rows in [('close_changed', plan['changed_open']), ('close_deleted', plan['deleted']),
                         ('insert_changed', plan['changed']), ('insert_new', plan['new'])] if rows | int > 0 -%}
    {%- do steps.append(step) -%}
  {%- endfor -%}
  {#- The change set counted the rows in the guard's scope (it is not empty when there are steps). -#}
  {%- do read.update({'rows': plan['scope_rows'] | int if plan['scope_rows'] is not none else none}) -%}
  {%- do load.update({'plan': plan, 'steps': steps, 'read': read}) -%}
  {%- for step in steps[:-1] -%}
    {%- call statement(step) -%}
      {{ historize._scd2_hist_step_sql(step, cfg, history, relations.change_set, load.columns.business,
          historize._unchanged_since(load.read, cfg)) }}
    {%- endcall -%}
    {%- do load.update({'read': historize._read_version(history, open_versions)}) -%}
  {%- endfor -%}
{% endmacro %}


{#- The last step with rows to write; none when the change set is empty. -#}
{% macro _scd2_hist_ordered_sql(load) %}
  {%- if not load.steps -%}
    {{ return(none) }}
  {%- endif -%}
  {{ return(historize._scd2_hist_step_sql(load.steps | last, load.cfg, load.history, load.relations.change_set,
      load.columns.business, historize._unchanged_since(load.read, load.cfg))) }}
{% endmacro %}


{#- The keys by action, as the plan counted them. -#}
{% macro _scd2_hist_ordered_result(load, result) %}
  {%- set plan = load.plan -%}
  {{ return({'new': plan['new'] | int, 'changed': plan['changed'] | int, 'deleted': plan['deleted'] | int,
             'written': (plan['new'] + plan['changed'] + plan['deleted']) | int, 'detail': 'ordered'}) }}
{% endmacro %}


{#- One row: the change set's counts by action (and of changed keys that have
    an open version to close), the rerun conflicts, the open versions the
    change set read (the guard's count), and the newest instant already in
    the table. -#}
{% macro _scd2_hist_plan_sql(cfg, history, changes) %}
  {%- set counted -%}
        coalesce(sum(case when _historize_action = 'changed' and _historize_has_open then 1 else 0 end), 0) as changed_open
  {%- endset -%}
  {{ historize._plan_sql(cfg, changes, counted, '_historize_open_started_at', historize._scd2_hist_newest_sql(cfg, history)) }}
{% endmacro %}


{#- The four ordered steps (close changed, close deleted, insert changed,
    insert new), each its own statement and each safe to rerun: a step run
    twice finds nothing left to do (closes match only open versions; a rerun
    of the load sees its own closes as `changed`). Delta rejects subqueries in
    UPDATE conditions, so the two closing steps are MERGEs. `guard` is the
    guard's relation (_unchanged_since). -#}
{% macro _scd2_hist_step_sql(step, cfg, history, changes, business_columns, guard) %}
  {%- set keys = cfg.unique_key -%}
  {%- set key_names = historize._change_set_key_names(keys) -%}
  {%- if step in ['close_changed', 'close_deleted'] -%}
    {%- set state = 'changed' if step == 'close_changed' else 'deleted' -%}
    merge into {{ history }} as hist
    using (
        select
            {{ historize._column_list(key_names, 'chg', lines=true) }}
        from {{ changes }} as chg
        cross join (
            {{ guard | indent(8) }}
        ) as unchanged_since
        where chg._historize_action = '{{ state }}' and chg._historize_has_open and unchanged_since._historize_unchanged
    ) as chg
    on {{ historize._key_join(keys, 'hist', 'chg', key_names) }}
        and {{ historize._quote(cfg.valid_to, 'hist') }} is null
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
    cross join (
        {{ guard | indent(4) }}
    ) as unchanged_since
    where chg._historize_action = '{{ state }}' and unchanged_since._historize_unchanged
  {%- endif -%}
{% endmacro %}
