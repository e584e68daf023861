{#- A late load (out_of_order='reconcile'): a snapshot whose load_timestamp
    lies before the table's newest load, applied where it belongs in time.

    The table then equals what loading every snapshot in time order gives.
    Between the late load (`at`) and the first load after it (`next`) no
    load happened, so for each key three states decide everything: the
    version that covers `at` (X: the key's state before the late load), the
    version that covers `next` (Y: its state at the next load; X itself when
    one version spans both), and the late snapshot's row (Z). Equal means
    the same row_hash, or both absent.
      Z = X          nothing changes.
      Z = Y, X /= Y  the change at `next` moves to `at`: X closes at `at`,
                     Y starts at `at` (and, while open, belongs to this run).
      Z /= X, Z /= Y a change at `at` and one back at `next`: X closes at
                     `at`, Z is a version from `at` to `next`, closed by the
                     next load's run; when X spanned both, its part from
                     `next` on is a version of its own; an open Y records
                     that it began after Z (changed) or after its absence
                     (new).
    Versions after `next` are never touched. Aliases: `late` the staged
    select, `at_load` X, `at_next` Y, `chg` the change set. -#}

{#- The change set of a late load: a row per table row the load writes, in
    the table's columns, with `_historize_merge_key` (the version key of the
    row it replaces; NULL for a new row) and the key's `_historize_action`
    (new, changed, deleted: what the late snapshot did to X). -#}
{% macro _scd2_hist_reconcile_changes_sql(cfg, history, staged, business_columns, timeline) %}
  {%- set keys = cfg.unique_key -%}
  {%- set next_at = historize._timestamp_sql(timeline.next) -%}
  {%- set at_next_key = [] -%}
  {%- for name in keys -%}
    {%- do at_next_key.append('coalesce(' ~ historize._qualified(name, 'late') ~ ', ' ~ historize._qualified(name, 'at_load') ~ ') = '
        ~ historize._qualified(name, 'at_next')) -%}
  {%- endfor -%}
    with versions_at_load as (
        {{ historize._scd2_hist_versions_at(cfg, history, historize.load_timestamp_sql()) }}
    ),

    versions_at_next as (
        {{ historize._scd2_hist_versions_at(cfg, history, next_at) }}
    ),

    compared as (
        select
            {{ historize._scd2_hist_reconcile_keys(keys) }},
            late.{{ historize._quote(cfg.hash_column) }} is not null as _historize_in_late,
            {{ historize._qualified(cfg.version_key, 'at_load') }} as _historize_load_version,
            {{ historize._qualified(cfg.version_key, 'at_next') }} as _historize_next_version,
            {{ historize._scd2_hist_same('late', 'at_load', cfg) }} as _historize_same_at_load,
            {{ historize._scd2_hist_same('late', 'at_next', cfg) }} as _historize_same_at_next
        from {{ staged }} as late
        full outer join versions_at_load as at_load
            on {{ historize._key_join(keys, 'late', 'at_load') }}
        full outer join versions_at_next as at_next
            on {{ at_next_key | join(' and ') }}
    ),

    classified as (
        select
            compared.*,
            compared._historize_load_version <=> compared._historize_next_version as _historize_spans_both,
            case
                when not compared._historize_in_late then 'deleted'
                when compared._historize_load_version is null then 'new'
                else 'changed'
            end as _historize_action
        from compared
        where not compared._historize_same_at_load
    ),

    {{ historize._scd2_hist_reconcile_rows_sql(cfg, staged, business_columns, timeline) }}
{% endmacro %}


{#- The versions valid at instant `at` (a SQL timestamp). -#}
{% macro _scd2_hist_versions_at(cfg, history, at) %}
        select hist.*
        from {{ history }} as hist
        where hist.{{ historize._quote(cfg.valid_from) }} <= {{ at }}
            and (hist.{{ historize._quote(cfg.valid_to) }} is null or hist.{{ historize._quote(cfg.valid_to) }} > {{ at }})
{% endmacro %}


{% macro _scd2_hist_reconcile_keys(keys) %}
  {%- set parts = [] -%}
  {%- for name in keys -%}
    {%- do parts.append('coalesce(' ~ historize._qualified(name, 'late') ~ ', ' ~ historize._qualified(name, 'at_load') ~ ', '
        ~ historize._qualified(name, 'at_next') ~ ') as ' ~ historize._quote('_historize_key_' ~ loop.index0)) -%}
  {%- endfor -%}
  {{- return(parts | join(',\n            ')) -}}
{% endmacro %}


{#- True when the late row and the version of `alias` hold the same state:
    the same row_hash, or both absent. -#}
{% macro _scd2_hist_same(late, alias, cfg) %}
  {%- set late_hash, version_hash = historize._qualified(cfg.hash_column, late), historize._qualified(cfg.version_key, alias) -%}
  {{- return('case when ' ~ late_hash ~ ' is null then ' ~ version_hash ~ ' is null else coalesce('
      ~ late_hash ~ ' = ' ~ historize._qualified(cfg.hash_column, alias) ~ ', false) end') -}}
{% endmacro %}


{#- The rows written: X closed at `at`; Y moved to `at` or restated; Z's
    version; X's part after `next` when X spans both. -#}
{% macro _scd2_hist_reconcile_rows_sql(cfg, staged, business_columns, timeline) %}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set next_at = historize._timestamp_sql(timeline.next) -%}
  {%- set next_run = historize._string_literal(timeline.next_run_id or historize.load_run_id()) -%}
  {%- set valid_to, state, run_id, loaded_at = historize._quote(cfg.valid_to), historize._quote(cfg.state),
        historize._quote(cfg.load_run_id), historize._quote(cfg.loaded_at) -%}
  {%- set ends_open = "chg._historize_in_late" -%}
  {%- set written = {
      'closed_at_load': {
          cfg.valid_to: at,
          cfg.state: "case when chg._historize_in_late then 'changed' else 'deleted' end",
          cfg.load_run_id: historize.load_run_id_sql(),
      },
      'moved_to_load': {
          cfg.version_key: historize._scd2_hist_key_at(cfg, 'at_next', at),
          cfg.valid_from: at,
          cfg.load_run_id: 'case when at_next.' ~ valid_to ~ ' is null then ' ~ historize.load_run_id_sql()
              ~ ' else at_next.' ~ run_id ~ ' end',
      },
      'restated_at_next': {
          cfg.state: "case when chg._historize_in_late then 'changed' else 'new' end",
      },
      'late_version': {
          cfg.version_key: historize._scd2_hist_key_at(cfg, 'late', at),
          cfg.valid_from: at,
          cfg.valid_to: next_at,
          cfg.state: "case when chg._historize_next_version is null then 'deleted' else 'changed' end",
          cfg.load_run_id: next_run,
      },
      'after_next': {
          cfg.version_key: historize._scd2_hist_key_at(cfg, 'at_load', next_at),
          cfg.valid_from: next_at,
          cfg.state: 'case when at_load.' ~ valid_to ~ " is null then (case when chg._historize_in_late then 'changed' else 'new' end)"
              ~ ' else at_load.' ~ state ~ ' end',
          cfg.load_run_id: 'case when at_load.' ~ valid_to ~ ' is null then ' ~ next_run ~ ' else at_load.' ~ run_id ~ ' end',
      },
  } -%}
    written as (
        {{ historize._scd2_hist_reconcile_row(cfg, business_columns, 'at_load', written.closed_at_load, 'at_load') }}
        from classified as chg
        inner join versions_at_load as at_load
            on at_load.{{ historize._quote(cfg.version_key) }} = chg._historize_load_version
        union all
        {{ historize._scd2_hist_reconcile_row(cfg, business_columns, 'at_next', written.moved_to_load, 'at_next') }}
        from classified as chg
        inner join versions_at_next as at_next
            on at_next.{{ historize._quote(cfg.version_key) }} = chg._historize_next_version
        where chg._historize_same_at_next
        union all
        {{ historize._scd2_hist_reconcile_row(cfg, business_columns, 'at_next', written.restated_at_next, 'at_next') }}
        from classified as chg
        inner join versions_at_next as at_next
            on at_next.{{ historize._quote(cfg.version_key) }} = chg._historize_next_version
        where not chg._historize_same_at_next and not chg._historize_spans_both and at_next.{{ valid_to }} is null
        union all
        {{ historize._scd2_hist_reconcile_row(cfg, business_columns, 'late', written.late_version) }}
        from classified as chg
        inner join {{ staged }} as late
            on {{ historize._key_join(cfg.unique_key, 'late', 'chg', historize._scd2_hist_change_keys(cfg)) }}
        where not chg._historize_same_at_next
        union all
        {{ historize._scd2_hist_reconcile_row(cfg, business_columns, 'at_load', written.after_next) }}
        from classified as chg
        inner join versions_at_load as at_load
            on at_load.{{ historize._quote(cfg.version_key) }} = chg._historize_load_version
        where chg._historize_spans_both
    )

    select written.*
    from written
{% endmacro %}


{% macro _scd2_hist_change_keys(cfg) %}
  {%- set names = [] -%}
  {%- for name in cfg.unique_key -%}{%- do names.append('_historize_key_' ~ loop.index0) -%}{%- endfor -%}
  {{ return(names) }}
{% endmacro %}


{#- The version key of a version of `alias`'s key beginning at `at`. -#}
{% macro _scd2_hist_key_at(cfg, alias, at) %}
  {%- set expressions = [] -%}
  {%- for name in cfg.unique_key -%}{%- do expressions.append(historize._qualified(name, alias)) -%}{%- endfor -%}
  {%- do expressions.append(at) -%}
  {{- return(historize.hash_key(expressions)) -}}
{% endmacro %}


{#- One written row: the table's columns taken from `alias` except those in
    `values`, this run's loaded_at, the key's action and the row it
    replaces (`replaces`: the alias of that version; none for a new row). -#}
{% macro _scd2_hist_reconcile_row(cfg, business_columns, alias, values, replaces=none) %}
  {%- set targets = [] -%}
  {%- for name in historize._scd2_hist_table_columns(cfg, business_columns) -%}
    {%- if name == cfg.loaded_at -%}
      {%- set value = historize._utc_literal(run_started_at) -%}
    {%- elif name in values -%}
      {%- set value = values[name] -%}
    {%- elif name in [cfg.version_key, cfg.valid_from, cfg.valid_to, cfg.state, cfg.load_run_id] and alias == 'late' -%}
      {{ exceptions.raise_compiler_error("historize: a late version's " ~ name ~ " must be given") }}
    {%- else -%}
      {%- set value = historize._qualified(name, alias) -%}
    {%- endif -%}
    {%- do targets.append(value ~ ' as ' ~ historize._quote(name)) -%}
  {%- endfor -%}
        select
            {{ targets | join(',\n            ') }},
            {{ historize._qualified(cfg.version_key, replaces) if replaces else 'cast(null as string)' }} as _historize_merge_key,
            chg._historize_action,
            {{ historize._select_list(historize._scd2_hist_change_keys(cfg), 'chg') }}
{% endmacro %}


{#- The plan of a late load: keys by action and rows to write, and the first
    keys in sorted order (for the refusal of a load at an instant already
    loaded with other data). -#}
{% macro _scd2_hist_reconcile_plan(cfg, changes) %}
  {%- set key_names = historize._scd2_hist_change_keys(cfg) -%}
  {%- set key_list = historize._column_list(key_names) -%}
  {%- set key_text = [] -%}
  {%- for name in key_names -%}{%- do key_text.append('cast(' ~ historize._quote(name) ~ ' as string)') -%}{%- endfor -%}
  {%- set query -%}
    select
        {%- for action in ['new', 'changed', 'deleted'] %}
        count(distinct case when _historize_action = '{{ action }}' then struct({{ key_list }}) end) as {{ action }},
        {%- endfor %}
        count(*) as rows_written,
        concat_ws('; ', slice(array_sort(collect_set(concat('(', concat_ws(', ', {{ key_text | join(', ') }}), ') ',
            _historize_action))), 1, 5)) as examples
    from {{ changes }}
  {%- endset -%}
  {%- set row = run_query(query).rows[0] -%}
  {{ return({
      'new': row['new'] | int,
      'changed': row['changed'] | int,
      'deleted': row['deleted'] | int,
      'writes': row['rows_written'] | int,
      'examples': row['examples'],
  }) }}
{% endmacro %}


{#- A late load at an instant already loaded: the same snapshot changes
    nothing; another is refused, naming both loads. -#}
{% macro _scd2_hist_assert_same_load(cfg, history, plan, timeline) %}
  {%- set keys = plan.new + plan.changed + plan.deleted -%}
  {%- if keys > 0 -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ cfg.model_name ~ ": load_timestamp " ~ historize.load_timestamp() ~ " (load_run_id "
        ~ historize.load_run_id() ~ ") was already loaded into " ~ history ~ " by load_run_id "
        ~ (timeline.known_run_id or 'unknown') ~ ", with other data: " ~ keys ~ " key(s) differ, e.g. " ~ plan.examples
        ~ "; a load already applied is not restated. Nothing was written") }}
  {%- endif -%}
{% endmacro %}


{#- One MERGE, one commit: each row replaces the version it names, or is
    inserted. `guard` covers the versions a late load can touch: open, or
    ended after it. -#}
{% macro _scd2_hist_reconcile_merge_sql(cfg, history, changes, business_columns, guard=historize._no_guard()) %}
  {%- set columns = historize._scd2_hist_table_columns(cfg, business_columns) -%}
  {%- set assignments = [] -%}
  {%- for name in columns -%}
    {%- do assignments.append(historize._quote(name) ~ ' = ' ~ historize._qualified(name, 'chg')) -%}
  {%- endfor -%}
    {{ historize._guarded_merge_into(history, changes, guard) }}
    on hist.{{ historize._quote(cfg.version_key) }} = chg._historize_merge_key
        and {{ historize._scd2_hist_reconcile_scope(cfg, 'hist') }}
    when matched then update set
        {{ assignments | join(',\n        ') }}
    when not matched then insert (
        {{ historize._column_list(columns) }}
    ) values (
        {{ historize._column_list(columns, 'chg') }}
    )
{% endmacro %}


{#- The versions a late load may write: open, or ended after it. -#}
{% macro _scd2_hist_reconcile_scope(cfg, alias) %}
  {%- set valid_to = historize._qualified(cfg.valid_to, alias) -%}
  {{- return('(' ~ valid_to ~ ' is null or ' ~ valid_to ~ ' > ' ~ historize.load_timestamp_sql() ~ ')') -}}
{% endmacro %}


{#- Applies a late load; returns its plan. The keys are checked first (the
    change set's joins need unique keys). -#}
{% macro _scd2_hist_load_late(cfg, history, relations, business_columns, timeline) %}
  {{ historize._assert_unique_key(relations.source, cfg.unique_key, cfg.model_name) }}
  {%- set read = historize._read_version(history, historize._scd2_hist_reconcile_scope(cfg, 'guarded')) -%}
  {{ historize._stage_change_set(relations,
      historize._scd2_hist_reconcile_changes_sql(cfg, historize._as_read(read), relations.source, business_columns,
        timeline)) }}
  {%- set plan = historize._scd2_hist_reconcile_plan(cfg, relations.changes) -%}
  {%- if timeline.known -%}
    {{ historize._scd2_hist_assert_same_load(cfg, history, plan, timeline) }}
  {%- endif -%}
  {%- if plan.writes == 0 -%}
    {%- call noop_statement('main', 'nothing to write', 'nothing to write', 0) -%}{%- endcall -%}
  {%- else -%}
    {{ historize._write_per_task(cfg, true) }}
    {#- A late load's rows in scope may begin after it: its guard's error is the conflict. -#}
    {%- call statement('main') -%}
      {{ historize._scd2_hist_reconcile_merge_sql(cfg, history, relations.changes, business_columns,
          guard=historize._unchanged_since(read, cfg, refuse_older=false)) }}
    {%- endcall -%}
    {{ historize._write_per_task(cfg, false) }}
  {%- endif -%}
  {{ return(plan) }}
{% endmacro %}
