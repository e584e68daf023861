{#- The load ledger: `historize_loads`, one Delta table per schema, recording
    every load applied to a history table that keeps it (scd2_hist with
    out_of_order='reconcile'), loads that changed nothing included. A late
    load must know every load after it, and a load that changes nothing
    leaves no trace in the history table itself.

    A load appends its row after its write, in a commit of its own on the
    ledger, never on the history table. The append is blind (it reads
    nothing of the ledger), so two models recording at once never conflict.
    A run killed between its write and its record is recorded by its rerun:
    the rerun finds its load already in the table, writes nothing, and
    appends the row. Readers therefore take each instant once, whatever
    number of rows it has. -#}

{#- The ledger of the history table's schema, created when missing. -#}
{% macro _load_ledger(history) %}
  {%- set ledger = api.Relation.create(database=history.database, schema=history.schema,
        identifier='historize_loads', type='table') -%}
  {%- if adapter.get_relation(database=history.database, schema=history.schema, identifier='historize_loads') is none -%}
    {%- call statement('create_historize_loads') -%}
      create table if not exists {{ ledger }} (
          table_name string,
          model string,
          load_timestamp timestamp,
          load_run_id string,
          outcome string,
          new_keys bigint,
          changed_keys bigint,
          deleted_keys bigint,
          recorded_at timestamp
      ) using delta
    {%- endcall -%}
    {%- do adapter.cache_added(ledger) -%}
  {%- endif -%}
  {{ return(ledger) }}
{% endmacro %}


{#- Appends this load's row: `outcome` 'written' or 'nothing to write', the
    counts by action. -#}
{% macro _record_load(ledger, cfg, history, load) %}
  {%- call statement('record_load') -%}
    insert into {{ ledger }} (
        table_name, model, load_timestamp, load_run_id, outcome, new_keys, changed_keys, deleted_keys, recorded_at
    )
    values (
        {{ historize._string_literal(history.identifier | lower) }},
        {{ historize._string_literal(cfg.model_name) }},
        {{ historize.load_timestamp_sql() }},
        {{ historize._string_literal(historize.load_run_id()) }},
        {{ historize._string_literal('written' if load.written > 0 else 'nothing to write') }},
        {{ load.new | int }},
        {{ load.changed | int }},
        {{ load.deleted | int }},
        {{ historize._utc_literal(run_started_at) }}
    )
  {%- endcall -%}
{% endmacro %}


{#- Where this load's load_timestamp lies among the loads applied to
    `history`: the ledger's (under the table's name or a former one) and the
    instants in the table itself (a load that changed something, recorded or
    not). Only instants from load_timestamp on are read: the open partition,
    the partitions of later ends, and versions that began later (skipped by
    file statistics otherwise). Returns, as 'YYYY-MM-DD HH:MM:SS.ffffff'
    UTC texts or none:
      newest        the newest load
      known         whether a load at this load_timestamp was applied
      known_run_id  its load_run_id
      next          the first load after this one
      next_run_id   its load_run_id (the ledger's, else the table's) -#}
{% macro _load_timeline(cfg, history, ledger) %}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set names = [history.identifier | lower] + cfg.former_names -%}
  {%- set name_list = [] -%}
  {%- for name in names -%}{%- do name_list.append(historize._string_literal(name)) -%}{%- endfor -%}
  {%- set valid_from, valid_to, run_id = historize._quote(cfg.valid_from), historize._quote(cfg.valid_to),
        historize._quote(cfg.load_run_id) -%}
  {#- In UTC whatever the session's time zone: the form load_timestamp takes. -#}
  {%- set utc_text = "date_format(to_utc_timestamp({}, current_timezone()), 'yyyy-MM-dd HH:mm:ss.SSSSSS')" -%}
  {%- set query -%}
    with ledger_loads as (
        select
            recorded.load_timestamp as load_at,
            recorded.load_run_id,
            0 as source_rank,
            recorded.recorded_at
        from {{ ledger }} as recorded
        where recorded.table_name in ({{ name_list | join(', ') }})
            and recorded.load_timestamp >= {{ at }}
    ),

    {#- A version's start is its opening load only while open: a closed
        version carries the run id of the load that closed it. -#}
    table_loads as (
        select
            hist.{{ valid_from }} as load_at,
            case when hist.{{ valid_to }} is null then hist.{{ run_id }} end as load_run_id,
            1 as source_rank,
            cast(null as timestamp) as recorded_at
        from {{ history }} as hist
        where hist.{{ valid_from }} >= {{ at }}
        union all
        select
            hist.{{ valid_to }} as load_at,
            hist.{{ run_id }} as load_run_id,
            1 as source_rank,
            cast(null as timestamp) as recorded_at
        from {{ history }} as hist
        where hist.{{ valid_to }} >= {{ at }}
    ),

    loads as (
        select * from ledger_loads
        union all
        select * from table_loads
    ),

    {#- One row per instant, with the run that loaded it (the ledger's first,
        else the table's; NULL where neither names one). #}
    instants as (
        select
            loads.load_at,
            min_by(loads.load_run_id, struct(loads.source_rank, loads.recorded_at))
                filter (where loads.load_run_id is not null) as load_run_id
        from loads
        group by loads.load_at
    )

    {#- One aggregate over the instants, so that `loads` (the ledger and two
        reads of the table) is computed once: Spark computes a CTE again at
        each read. #}
    select
        {{ utc_text.format('max(instants.load_at)') }} as newest,
        coalesce(max(instants.load_at = {{ at }}), false) as known,
        max(case when instants.load_at = {{ at }} then instants.load_run_id end) as known_run_id,
        {{ utc_text.format('min(case when instants.load_at > ' ~ at ~ ' then instants.load_at end)') }} as next,
        min_by(instants.load_run_id, instants.load_at) filter (where instants.load_at > {{ at }}) as next_run_id
    from instants
  {%- endset -%}
  {%- set row = run_query(query).rows[0] -%}
  {{ return({'newest': row['newest'], 'known': row['known'], 'known_run_id': row['known_run_id'],
             'next': row['next'], 'next_run_id': row['next_run_id']}) }}
{% endmacro %}


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
    the table's columns, with `_historize_merge_key` and `_historize_replaces`
    (the version key of the row it replaces, true; a new row's own, false:
    _scd2_hist_reconcile_row) and the key's `_historize_action`
    (new, changed, deleted: what the late snapshot did to X). -#}
{% macro _scd2_hist_reconcile_changes_sql(cfg, history, staged, business_columns, timeline) %}
  {%- set keys = cfg.unique_key -%}
  {%- set next_at = "timestamp'" ~ timeline.next ~ "+00:00'" -%}
  {%- set key_names = historize._change_set_key_names(keys) -%}
  {%- set at_next_key, change_keys = [], [] -%}
  {%- for name in keys -%}
    {%- do at_next_key.append('coalesce(' ~ historize._quote(name, 'late') ~ ', ' ~ historize._quote(name, 'at_load') ~ ') = '
        ~ historize._quote(name, 'at_next')) -%}
    {%- do change_keys.append('coalesce(' ~ historize._quote(name, 'late') ~ ', ' ~ historize._quote(name, 'at_load') ~ ', '
        ~ historize._quote(name, 'at_next') ~ ') as ' ~ historize._quote(key_names[loop.index0])) -%}
  {%- endfor -%}
  {#- Whether the late row and a version hold the same state: the same row_hash, or both absent. -#}
  {%- set late_hash = historize._quote(cfg.hash_column, 'late') -%}
  {%- set same = {} -%}
  {%- for alias in ['at_load', 'at_next'] -%}
    {%- do same.update({alias: 'case when ' ~ late_hash ~ ' is null then ' ~ historize._quote(cfg.version_key, alias)
        ~ ' is null else coalesce(' ~ late_hash ~ ' = ' ~ historize._quote(cfg.hash_column, alias) ~ ', false) end'}) -%}
  {%- endfor -%}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set began, ended = historize._quote(cfg.valid_from, 'hist'), historize._quote(cfg.valid_to, 'hist') -%}
    with versions_at_load as (
        select hist.*
        from {{ history }} as hist
        where {{ began }} <= {{ at }}
            and ({{ ended }} is null or {{ ended }} > {{ at }})
    ),

    versions_at_next as (
        select hist.*
        from {{ history }} as hist
        where {{ began }} <= {{ next_at }}
            and ({{ ended }} is null or {{ ended }} > {{ next_at }})
    ),

    compared as (
        select
            {{ change_keys | join(',\n            ') }},
            late.{{ historize._quote(cfg.hash_column) }} is not null as _historize_in_late,
            {{ historize._quote(cfg.version_key, 'at_load') }} as _historize_load_version,
            {{ historize._quote(cfg.version_key, 'at_next') }} as _historize_next_version,
            {{ same.at_load }} as _historize_same_at_load,
            {{ same.at_next }} as _historize_same_at_next
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

  {#- The rows written: X closed at `at`; Y moved to `at` or restated; Z's
      version; X's part after `next` when X spans both. -#}
  {%- set next_run = historize._string_literal(timeline.next_run_id or historize.load_run_id()) -%}
  {%- set valid_to, state, run_id = historize._quote(cfg.valid_to), historize._quote(cfg.state),
        historize._quote(cfg.load_run_id) -%}
  {#- The key columns of each side, for the version key of a version of its key (with when it begins). -#}
  {%- set key_of = {'at_load': [], 'at_next': [], 'late': []} -%}
  {%- for side, names in key_of.items() -%}
    {%- for name in keys -%}{%- do names.append(historize._quote(name, side)) -%}{%- endfor -%}
  {%- endfor -%}
  {%- set written = {
      'closed_at_load': {
          cfg.valid_to: at,
          cfg.state: "case when chg._historize_in_late then 'changed' else 'deleted' end",
          cfg.load_run_id: historize._string_literal(historize.load_run_id()),
      },
      'moved_to_load': {
          cfg.version_key: historize.hash_key(key_of.at_next + [at]),
          cfg.valid_from: at,
          cfg.load_run_id: 'case when at_next.' ~ valid_to ~ ' is null then ' ~ historize._string_literal(historize.load_run_id())
              ~ ' else at_next.' ~ run_id ~ ' end',
      },
      'restated_at_next': {
          cfg.state: "case when chg._historize_in_late then 'changed' else 'new' end",
      },
      'late_version': {
          cfg.version_key: historize.hash_key(key_of.late + [at]),
          cfg.valid_from: at,
          cfg.valid_to: next_at,
          cfg.state: "case when chg._historize_next_version is null then 'deleted' else 'changed' end",
          cfg.load_run_id: next_run,
      },
      'after_next': {
          cfg.version_key: historize.hash_key(key_of.at_load + [next_at]),
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
            on {{ historize._key_join(cfg.unique_key, 'late', 'chg', historize._change_set_key_names(cfg.unique_key)) }}
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


{#- One written row: the table's columns taken from `alias` except those in
    `values`, this run's loaded_at, the key's action, and the version key the
    MERGE joins on (`_historize_merge_key`): of the row it replaces
    (`replaces`: the alias of that version), or, for a new row, its own, which
    `_historize_replaces` (false) keeps from matching. A new row's real key,
    not a NULL one, lets Spark spread the inserts over the MERGE's tasks. -#}
{% macro _scd2_hist_reconcile_row(cfg, business_columns, alias, values, replaces=none) %}
  {%- set targets, own = [], {} -%}
  {%- for name in historize._scd2_hist_table_columns(cfg, business_columns) -%}
    {%- if name == cfg.loaded_at -%}
      {%- set value = historize._utc_literal(run_started_at) -%}
    {%- elif name in values -%}
      {%- set value = values[name] -%}
    {%- elif name in [cfg.version_key, cfg.valid_from, cfg.valid_to, cfg.state, cfg.load_run_id] and alias == 'late' -%}
      {{ exceptions.raise_compiler_error("historize: a late version's " ~ name ~ " must be given") }}
    {%- else -%}
      {%- set value = historize._quote(name, alias) -%}
    {%- endif -%}
    {%- do targets.append(value ~ ' as ' ~ historize._quote(name)) -%}
    {%- if name == cfg.version_key -%}{%- do own.update({'key': value}) -%}{%- endif -%}
  {%- endfor -%}
        select
            {{ targets | join(',\n            ') }},
            {{ historize._quote(cfg.version_key, replaces) if replaces else own.key }} as _historize_merge_key,
            {{ 'true' if replaces else 'false' }} as _historize_replaces,
            chg._historize_action,
            {{ historize._column_list(historize._change_set_key_names(cfg.unique_key), 'chg', lines=true) }}
{% endmacro %}


{#- One MERGE, one commit: each row replaces the version it names, or is
    inserted. `guard` (_unchanged_since) covers the versions a late load can
    touch: open, or ended after it. -#}
{% macro _scd2_hist_reconcile_merge_sql(cfg, history, changes, business_columns, guard) %}
  {%- set columns = historize._scd2_hist_table_columns(cfg, business_columns) -%}
  {%- set assignments = [] -%}
  {%- for name in columns -%}
    {%- do assignments.append(historize._quote(name) ~ ' = ' ~ historize._quote(name, 'chg')) -%}
  {%- endfor -%}
    merge into {{ history }} as hist
    using (
        {{ historize._guarded_rows_sql(changes, guard) | trim | indent(4) }}
    ) as chg
    on hist.{{ historize._quote(cfg.version_key) }} = chg._historize_merge_key
        and chg._historize_replaces
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
  {%- set valid_to = historize._quote(cfg.valid_to, alias) -%}
  {{- return('(' ~ valid_to ~ ' is null or ' ~ valid_to ~ ' > ' ~ historize.load_timestamp_sql() ~ ')') -}}
{% endmacro %}


{#- scd2_hist, path `late`: a snapshot older than the table's newest load, with
    out_of_order='reconcile', applied where it belongs in time. Its change set
    is cached and checked, then one MERGE guarded over the versions it may
    touch, whose rows in scope may begin after it: the guard's error is then the
    conflict, not the refusal of an older load. -#}

{#- The change set of a late load, cached and checked: `load` gets `read` (the
    version read, for the guard) and `plan` (the keys by action, `writes` the
    rows to write, `examples` the first keys in sorted order). The keys are
    checked first (the change set's joins need unique keys); at an instant
    already loaded, the same snapshot changes nothing and another is refused,
    naming both loads. -#}
{% macro _scd2_hist_late_prepare(load) %}
  {%- set cfg, history, relations, timeline = load.cfg, load.history, load.relations, load.timeline -%}
  {%- set business_columns = load.columns.business -%}
  {{ historize._assert_unique_key(relations.staged, cfg.unique_key, cfg.model_name) }}
  {%- set read = historize._read_version(history, historize._scd2_hist_reconcile_scope(cfg, 'guarded')) -%}
  {{ historize._stage_change_set(relations,
      historize._scd2_hist_reconcile_changes_sql(cfg, read.snapshot, relations.staged, business_columns,
        timeline)) }}
  {#- The plan: keys by action and rows to write, and the first keys in sorted order. -#}
  {%- set key_names = historize._change_set_key_names(cfg.unique_key) -%}
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
    from {{ relations.change_set }}
  {%- endset -%}
  {%- set row = run_query(query).rows[0] -%}
  {%- set plan = {
      'new': row['new'] | int,
      'changed': row['changed'] | int,
      'deleted': row['deleted'] | int,
      'writes': row['rows_written'] | int,
      'examples': row['examples'],
  } -%}
  {%- if timeline.known and plan.new + plan.changed + plan.deleted > 0 -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ cfg.model_name ~ ": load_timestamp " ~ historize.load_timestamp() ~ " (load_run_id "
        ~ historize.load_run_id() ~ ") was already loaded into " ~ history ~ " by load_run_id "
        ~ (timeline.known_run_id or 'unknown') ~ ", with other data: " ~ (plan.new + plan.changed + plan.deleted)
        ~ " key(s) differ, e.g. " ~ plan.examples ~ "; a load already applied is not restated. Nothing was written") }}
  {%- endif -%}
  {%- do load.update({'read': read, 'plan': plan}) -%}
{% endmacro %}


{#- The late load's MERGE; none when its change set writes nothing. -#}
{% macro _scd2_hist_late_sql(load) %}
  {%- if load.plan.writes == 0 -%}
    {{ return(none) }}
  {%- endif -%}
  {{ return(historize._scd2_hist_reconcile_merge_sql(load.cfg, load.history, load.relations.change_set, load.columns.business,
      historize._unchanged_since(load.read, load.cfg, refuse_older=false))) }}
{% endmacro %}


{#- The keys by action, as its plan counted them. -#}
{% macro _scd2_hist_late_result(load, result) %}
  {%- set plan = load.plan -%}
  {{ return({'new': plan.new, 'changed': plan.changed, 'deleted': plan.deleted,
             'written': plan.new + plan.changed + plan.deleted, 'detail': 'late, before ' ~ load.timeline.next}) }}
{% endmacro %}
