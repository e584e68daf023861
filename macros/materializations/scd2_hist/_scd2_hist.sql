{#- Reads and validates every scd2_hist option in one place, and names the
    table's technical columns once. -#}
{% macro _scd2_hist_config() %}
  {%- set cfg = historize._history_config('scd2_hist') -%}
  {%- set strategy = historize._read_option('strategy', 'merge', one_of=['merge', 'ordered']) -%}
  {#- refuse: a load older than the table's newest is refused. reconcile: it is
      applied where it belongs in time (_scd2_hist_reconcile.sql), which needs
      the record of every load (the load ledger) and the one-MERGE strategy. -#}
  {%- set out_of_order = historize._read_option('out_of_order', 'refuse', one_of=['refuse', 'reconcile']) -%}
  {%- if out_of_order == 'reconcile' and strategy != 'merge' and execute -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": out_of_order 'reconcile' needs "
        ~ "strategy 'merge' (a late load rewrites versions after it in one MERGE); strategy is '" ~ strategy ~ "'") }}
  {%- endif -%}
  {#- snapshot: the select is the current state of every key. changes: each row
      of the select is an event, the key's full image after one change
      (_scd2_hist_events.sql), ordered per key by sequence_by; deleted_when
      marks a delete. -#}
  {%- set input = historize._read_option('input', 'snapshot', one_of=['snapshot', 'changes']) -%}
  {%- set sequence_by = historize._as_name_list('sequence_by', historize._read_option('sequence_by', [])) -%}
  {%- set deleted_when = historize._read_option('deleted_when', none) -%}
  {%- if execute and input == 'changes' -%}
    {%- if not sequence_by -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": input 'changes' needs sequence_by: "
          ~ "the timestamp column that orders a key's events, then any columns that break its ties") }}
    {%- endif -%}
    {%- if strategy != 'merge' or out_of_order != 'refuse' -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": strategy and out_of_order apply to "
          ~ "input 'snapshot'; input 'changes' writes one MERGE and places late events itself") }}
    {%- endif -%}
    {%- if deleted_when is not none and (deleted_when is not string or deleted_when | trim == '') -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": deleted_when is '" ~ deleted_when
          ~ "'; expected an SQL condition on the select's columns, e.g. \"op = 'D'\"") }}
    {%- endif -%}
  {%- elif execute and (sequence_by or deleted_when is not none) -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": sequence_by and deleted_when apply to "
        ~ "input 'changes'; input is '" ~ input ~ "'") }}
  {%- endif -%}
  {#- adopt_from: a dbt snapshot of the project, or an SCD2 table (schema.table,
      its columns named by adopt_columns), whose versions the model's first load
      takes over (_scd2_hist_adopt.sql); adopt_repair: the kinds of defect found
      in it that are repaired (their rows set aside) instead of refused. -#}
  {%- set adoption = historize._adoption_options(cfg, with_columns=true) -%}
  {%- if execute and adoption.adopt_from is not none and input == 'changes' -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": adopt_from applies to input "
        ~ "'snapshot'; input is 'changes'") }}
  {%- endif -%}
  {%- do cfg.update(adoption) -%}
  {%- do cfg.update({
      'input': input,
      'sequence_by': sequence_by,
      'deleted_when': deleted_when | trim if deleted_when is string else none,
      'strategy': strategy,
      'out_of_order': out_of_order,
      'valid_from': 'version_started_at',
      'valid_to': 'version_ended_at',
      'state': 'version_state',
      'load_run_id': 'load_run_id',
      'loaded_at': 'loaded_at',
      'hash_column': 'row_hash',
  }) -%}
  {#- From events, a load closes few versions spread over the open partition: deletion
      vectors mark them instead of copying the files they sit in, so that its writes follow
      its events, unless the model's tblproperties say otherwise. -#}
  {%- if input == 'changes' and 'delta.enableDeletionVectors' not in cfg.tblproperties -%}
    {%- do cfg.tblproperties.update({'delta.enableDeletionVectors': 'true'}) -%}
  {%- endif -%}
  {#- Open versions apart from closed ones: a load reads and rewrites only the
      open partition (version_ended_at NULL) and adds the partition of its own
      load_timestamp, so its cost follows the open versions, not the history.
      The model's partition_by, if any, partitions further. -#}
  {%- set model_partitions = config.get('partition_by') or [] -%}
  {%- do cfg.update({
      'partition_by': [cfg.valid_to] + historize._as_name_list('partition_by', model_partitions),
  }) -%}
  {#- Written after the select's columns, in this order. -#}
  {%- do cfg.update({'technical_columns': [cfg.hash_column, cfg.valid_from, cfg.valid_to, cfg.state, cfg.load_run_id, cfg.loaded_at]}) -%}
  {{ return(cfg) }}
{% endmacro %}


{#- The select's columns as scd2_hist uses them, checked: `business` (all but
    row_hash, in select order; with input 'changes', also but the columns of
    sequence_by and those deleted_when reads), `attributes` (business less
    the key, as Column objects: they make the row_hash), `has_row_hash` (the
    select brings its own). -#}
{% macro _scd2_hist_columns(cfg, select_columns) %}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {{ historize._assert_columns_present(cfg.unique_key, select_names, 'unique_key', cfg.model_name) }}
  {%- set reserved = [cfg.version_key] + cfg.technical_columns | reject('equalto', cfg.hash_column) | list -%}
  {%- set event_columns = [] -%}
  {%- if cfg.input == 'changes' -%}
    {%- do reserved.append(cfg.hash_column) -%}
    {%- do event_columns.extend(historize._scd2_hist_event_columns(cfg, select_columns)) -%}
  {%- endif -%}
  {%- set clashes = select_names | select('in', reserved) | list -%}
  {%- if clashes -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ cfg.model_name ~ ": the select has column(s) " ~ clashes | join(', ')
        ~ ", which scd2_hist writes itself; rename them in the select") }}
  {%- endif -%}
  {%- set business = select_names | reject('in', [cfg.hash_column] + event_columns) | list -%}
  {{ return({
      'business': business,
      'attributes': historize._columns_named(select_columns, business | reject('in', cfg.unique_key) | list),
      'has_row_hash': cfg.hash_column in select_names,
  }) }}
{% endmacro %}


{#- The plan of an scd2_hist load and the statements that carry it out.
    With strategy 'merge' a load is its MERGE alone (its checks: _scd2_hist_checks_sql);
    strategy 'ordered' runs the plan query first, for its steps' counts. -#}

{#- That MERGE: the change set of the staged select `staged` computed, checked and
    written in one statement. A row of the change set that would close an
    open version begun at this load_timestamp (a rerun over other data)
    raises the refusal naming its key, as the source's rows pass the checks:
    the change set carries each key's open version, so the refusal reads no
    table of its own. -#}
{% macro _scd2_hist_checked_merge_sql(cfg, history, staged, business_columns) %}
  {%- set rerun = historize._refusal('rerun_conflict_key', cfg.model_name, what='version') -%}
  {%- set key_text = [] -%}
  {%- for name in cfg.unique_key -%}
    {%- do key_text.append('cast(chg.' ~ historize._quote('_historize_key_' ~ loop.index0) ~ ' as string)') -%}
  {%- endfor -%}
  {%- set checked -%}
        case
            when chg._historize_action in ('changed', 'deleted') and chg._historize_open_started_at = {{ historize.load_timestamp_sql() }}
                then raise_error(concat({{ historize._string_literal(rerun[0]) }}, concat_ws(', ', {{ key_text | join(', ') }}),
                    {{ historize._string_literal(rerun[1]) }}, chg._historize_action, {{ historize._string_literal(rerun[2]) }}))
            else historize_checks._historize_checked
        end
  {%- endset -%}
  {%- set with_sql -%}
        with historize_changes as (
            {{ historize._scd2_hist_changes_sql(cfg, history, staged, business_columns, scope_rows=false) | indent(8) }}
        ),

        historize_checks as (
            {{ historize._scd2_hist_checks_sql(cfg, history, staged) | indent(8) }}
        )
  {%- endset -%}
  {{ return(historize._scd2_hist_merge_sql(cfg, history, 'historize_changes', business_columns,
      {'join': 'cross join historize_checks', 'predicate': checked | trim}, with_sql)) }}
{% endmacro %}


{#- The one-row relation of that MERGE's checks (the plan's, with the same
    messages as the plan query's): its column `_historize_checked` is true,
    or the first failing check raises its refusal, before Delta writes
    anything. The checks read the staged select `staged` (its keys, column
    pruned) and the table, never the change set, which Spark would compute
    again for them: the newest instant already in the table
    (_scd2_hist_newest_sql). The key check groups the select by key: its rows
    with a NULL key (`null_key_rows`), and its duplicated keys
    (`duplicated_keys`), each {order, key columns, example} so that sorting
    puts the most repeated first, then by key, as _assert_unique_key does. -#}
{% macro _scd2_hist_checks_sql(cfg, history, staged) %}
  {%- set keys = cfg.unique_key -%}
  {%- set null_key = historize._refusal('null_key', cfg.model_name, cfg.unique_key) -%}
  {%- set duplicated_key = historize._refusal('duplicated_key', cfg.model_name, cfg.unique_key) -%}
  {%- set older = historize._refusal('older_load', cfg.model_name, history=history) -%}
  {%- set text = historize._string_literal -%}
  {%- set key_names = [] -%}
  {%- for name in keys -%}{%- do key_names.append(historize._quote('_historize_key_' ~ loop.index0)) -%}{%- endfor -%}
  {%- set any_null = key_names | join(' is null or ') ~ ' is null' -%}
    select
        case
            when invalid_keys.null_key_rows > 0
                then raise_error(concat({{ text(null_key[0]) }}, cast(invalid_keys.null_key_rows as string), {{ text(null_key[1]) }}))
            when size(invalid_keys.duplicated_keys) > 0
                then raise_error(concat({{ text(duplicated_key[0]) }}, cast(size(invalid_keys.duplicated_keys) as string),
                    {{ text(duplicated_key[1]) }},
                    concat_ws('; ', transform(slice(array_sort(invalid_keys.duplicated_keys), 1, 5), duplicated -> duplicated.example)),
                    {{ text(duplicated_key[2]) }}))
            when newest.newest_timestamp > {{ historize.load_timestamp_sql() }}
                then raise_error(concat({{ text(older[0]) }}, cast(newest.newest_timestamp as string), {{ text(older[1]) }}))
            else true
        end as _historize_checked
    from (
        select
            coalesce(sum(case when {{ any_null }} then _historize_occurrences end), 0) as null_key_rows,
            collect_set(case when not ({{ any_null }}) and _historize_occurrences > 1 then named_struct(
                'order', -_historize_occurrences,
                {%- for name in key_names %}
                'key_{{ loop.index0 }}', {{ name }},
                {%- endfor %}
                'example', concat('(', concat_ws(', ', {% for name in key_names %}cast({{ name }} as string){{ ', ' if not loop.last }}{% endfor %}), ') x',
                    cast(_historize_occurrences as string))) end) as duplicated_keys
        from (
            select
                {%- for name in keys %}
                {{ historize._quote(name, 'src') }} as {{ key_names[loop.index0] }},
                {%- endfor %}
                count(*) as _historize_occurrences
            from {{ staged }} as src
            group by {{ historize._column_list(keys, 'src') }}
        ) as occurrences
    ) as invalid_keys
    cross join (
        {{ historize._scd2_hist_newest_sql(cfg, history) | trim | indent(4) }}
    ) as newest
{% endmacro %}


{#- How many keys that MERGE closed as deleted, when it both updated and
    inserted rows (a changed key does both, a deleted key updates one): its
    source rows beyond those updated and inserted (_scd2_hist_merge_sql gives
    each deleted key a row that writes nothing), from the operation metrics
    of its commit among the table's newest ten. Any of them that updated and
    inserted as many rows may be it; when they differ in source rows, the
    table says: the versions this run closed as deleted at load_timestamp. -#}
{% macro _scd2_hist_merged_deletes(cfg, history, merged) %}
  {%- set source_rows = [] -%}
  {%- for commit in run_query('describe history ' ~ history ~ ' limit 10').rows if commit['operation'] == 'MERGE' -%}
    {%- set listed = commit['operationMetrics'] -%}
    {%- set metrics = listed if listed is mapping else fromjson(listed) -%}
    {%- if metrics['numTargetRowsUpdated'] | int == merged.updated and metrics['numTargetRowsInserted'] | int == merged.inserted -%}
      {%- do source_rows.append(metrics['numSourceRows'] | int) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if source_rows | unique | list | length == 1 -%}
    {{ return(source_rows[0] - merged.inserted - merged.updated) }}
  {%- endif -%}
  {%- set deleted_sql -%}
    select count(*) as deleted_keys
    from {{ history }} as hist
    where {{ historize._quote(cfg.valid_to, 'hist') }} = {{ historize.load_timestamp_sql() }}
        and {{ historize._quote(cfg.state, 'hist') }} = 'deleted'
        and {{ historize._quote(cfg.load_run_id, 'hist') }} = {{ historize._string_literal(historize.load_run_id()) }}
  {%- endset -%}
  {{ return(run_query(deleted_sql).rows[0]['deleted_keys'] | int) }}
{% endmacro %}


{#- The newest instant already in the table when it is after this load's
    load_timestamp (a load older than the table is refused), else one not
    after it: one row and column `newest_timestamp`. A closed version began
    before it ended, so it is the newest end or the newest start of an open
    version; the scan reads the open partition and the partitions of versions
    that ended after load_timestamp (none, for a load in time order), not the
    history. -#}
{% macro _scd2_hist_newest_sql(cfg, history) %}
  {%- set valid_to = historize._quote(cfg.valid_to, 'hist') -%}
    select
        greatest(max({{ historize._quote(cfg.valid_from, 'hist') }}) filter (where {{ valid_to }} is null),
            max({{ valid_to }})) as newest_timestamp
    from {{ history }} as hist
    where {{ valid_to }} is null or {{ valid_to }} > {{ historize.load_timestamp_sql() }}
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


{#- SQL builders of scd2_hist. Aliases: `src` the staged select, `hist` the
    history table, `chg` the change set. -#}


{#- The history table's columns, in order. -#}
{% macro _scd2_hist_table_columns(cfg, business_columns) %}
  {{ return([cfg.version_key] + business_columns + cfg.technical_columns) }}
{% endmacro %}


{#- Expressions of a new open version, in table column order, from a relation
    `alias` holding the select's columns. -#}
{% macro _scd2_hist_new_version_values(cfg, business_columns, alias, state_sql) %}
  {%- set values = [historize._version_key(cfg.unique_key, alias)] -%}
  {%- for name in business_columns + [cfg.hash_column] -%}
    {%- do values.append(historize._quote(name, alias)) -%}
  {%- endfor -%}
  {%- do values.extend([
      historize.load_timestamp_sql(),
      'cast(null as timestamp)',
      state_sql,
      historize._string_literal(historize.load_run_id()),
      historize._utc_literal(run_started_at),
  ]) -%}
  {{ return(values) }}
{% endmacro %}


{#- Each key of the select or with an open version, classified against the
    table as it is now:
      invalid    a row of the select whose key is NULL or duplicated (the run
                 fails on it before writing)
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
            true as _historize_in_source,
            count(*) over (partition by {{ historize._column_list(keys, 'src') }}) as _historize_occurrences
        from {{ staged }} as src
    ),

    open_versions as (
        select
            {{ historize._column_list(keys + [cfg.hash_column, cfg.valid_from], lines=true) }}
        from {{ history }}
        where {{ historize._quote(cfg.valid_to) }} is null
    ),

    closed_as_changed_by_this_load as (
        select distinct {{ historize._column_list(keys) }}
        from {{ history }}
        where {{ historize._quote(cfg.valid_to) }} = {{ historize.load_timestamp_sql() }}
            and {{ historize._quote(cfg.state) }} = 'changed'
    ),

    classified as (
        select
            {{ historize._change_set_keys(keys, 'src', 'open_versions') }},
            {{ historize._column_list(business_columns + [cfg.hash_column], 'src', lines=true) }},
            case
                when src._historize_in_source and ({{ historize._column_list(keys, 'src', suffix=' is null', separator=' or ') }} or src._historize_occurrences > 1) then 'invalid'
                when src._historize_in_source is null then 'deleted'
                when {{ historize._quote(first_key, 'open_versions') }} is null
                    then case when {{ historize._quote(first_key, 'closed_as_changed_by_this_load') }} is null then 'new' else 'changed' end
                when {{ historize._quote(cfg.hash_column, 'src') }} <=> {{ historize._quote(cfg.hash_column, 'open_versions') }} then 'unchanged'
                else 'changed'
            end as _historize_action,
            {{ historize._quote(first_key, 'open_versions') }} is not null as _historize_has_open,
            {{ historize._quote(cfg.valid_from, 'open_versions') }} as _historize_open_started_at,
            src._historize_occurrences
        from keyed_source as src
        full outer join open_versions
            on {{ historize._key_join(keys, 'src', 'open_versions') }}
        left join closed_as_changed_by_this_load
            on {{ historize._key_join(keys, 'src', 'closed_as_changed_by_this_load') }}
    )
  {%- set keep = "classified._historize_action <> 'unchanged'" -%}
  {%- if scope_rows %},

    {{ historize._classified_with_scope_rows(history, cfg, keep) }}
  {%- else %}
    select classified.*
    from classified
    where {{ keep }}
  {%- endif %}
{% endmacro %}


{#- All four effects in one MERGE, one commit: a changed key's row closes its
    open version and inserts the new one (_split_merge_into). A changed key
    with no open version (closed as changed at this load_timestamp by a run
    of strategy 'ordered' that stopped) is closed again, its row matching
    that closed version. A deleted key's second row (`counted`) writes
    nothing: it makes Delta's count of source rows tell the deleted keys from
    the changed ones (the block's counts of a MERGE). `checked`: what every
    source row must pass (_split_merge_into), the MERGE's checks. -#}
{% macro _scd2_hist_merge_sql(cfg, history, changes, business_columns, checked, with_sql='') %}
  {%- set roles -%}
        case
            when _historize_action = 'changed' then array('update', 'insert')
            when _historize_action = 'deleted' then array('update', 'counted')
            else array('insert')
        end
  {%- endset -%}
  {%- set valid_to = historize._quote(cfg.valid_to, 'hist') -%}
    {{ historize._split_merge_into(history, changes, cfg.unique_key, roles, checked, with_sql) }}
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
        {{ historize._quote(cfg.load_run_id) }} = {{ historize._string_literal(historize.load_run_id()) }},
        {{ historize._quote(cfg.loaded_at) }} = {{ historize._utc_literal(run_started_at) }}
{% endmacro %}


{#- The four ordered steps (close changed, close deleted, insert changed,
    insert new), each its own statement and each safe to rerun: a step run
    twice finds nothing left to do (closes match only open versions; a rerun
    of the load sees its own closes as `changed`). Delta rejects subqueries in
    UPDATE conditions, so the two closing steps are MERGEs. -#}
{% macro _scd2_hist_step_sql(step, cfg, history, changes, business_columns, guard) %}
  {%- set keys = cfg.unique_key -%}
  {%- set key_names = [] -%}
  {%- for name in keys -%}{%- do key_names.append('_historize_key_' ~ loop.index0) -%}{%- endfor -%}
  {%- if step in ['close_changed', 'close_deleted'] -%}
    {%- set state = 'changed' if step == 'close_changed' else 'deleted' -%}
    merge into {{ history }} as hist
    using (
        select
            {{ historize._column_list(key_names, 'chg', lines=true) }}
        from {{ changes }} as chg
        {{ guard.join }}
        where chg._historize_action = '{{ state }}' and chg._historize_has_open and {{ guard.predicate }}
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
    {{ guard.join }}
    where chg._historize_action = '{{ state }}' and {{ guard.predicate }}
  {%- endif -%}
{% endmacro %}

