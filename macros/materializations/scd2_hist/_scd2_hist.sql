{#- Reads and validates every scd2_hist option in one place, and names the
    table's technical columns once. -#}
{% macro _scd2_hist_config() %}
  {%- set cfg = historize._history_config('scd2_hist') -%}
  {%- set strategy = historize._read_option('strategy', 'merge', one_of=['merge', 'ordered']) -%}
  {#- refuse: a load older than the table's newest is refused. reconcile: it is
      applied where it belongs in time (_scd2_hist_reconcile.sql), which needs
      the record of every load (the load ledger) and the one-MERGE strategy. -#}
  {#- bitemporal: the table keeps every belief, what was true when as recorded
      when (docs/bitemporal.md): each row also has recorded_at, the run that
      recorded it, and superseded_at, the run that stopped believing it. From
      snapshots it places late loads as reconcile does, so it implies it. -#}
  {%- set bitemporal = historize._read_option('bitemporal', false, one_of=[true, false]) -%}
  {%- set input = historize._read_option('input', 'snapshot', one_of=['snapshot', 'changes']) -%}
  {%- set out_of_order = historize._read_option('out_of_order', 'reconcile' if bitemporal and input == 'snapshot' else 'refuse',
        one_of=['refuse', 'reconcile']) -%}
  {%- if execute and bitemporal and input == 'snapshot' and out_of_order != 'reconcile' -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": bitemporal keeps late loads and "
        ~ "restatements as beliefs, so it implies out_of_order 'reconcile'; out_of_order is '" ~ out_of_order ~ "'") }}
  {%- endif -%}
  {%- if out_of_order == 'reconcile' and strategy != 'merge' and execute -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": out_of_order 'reconcile' needs "
        ~ "strategy 'merge' (a late load rewrites versions after it in one MERGE); strategy is '" ~ strategy ~ "'") }}
  {%- endif -%}
  {#- snapshot: the select is the current state of every key. changes: each row
      of the select is an event, the key's full image after one change
      (_scd2_hist_events.sql), ordered per key by sequence_by; deleted_when
      marks a delete. -#}
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
  {%- if execute and adoption.adopt_from is not none and bitemporal -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": adopt_from takes over one timeline; "
        ~ "a bitemporal table starts its beliefs at its first load. Nothing was written") }}
  {%- endif -%}
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
      'bitemporal': bitemporal,
      'recorded_at': 'recorded_at',
      'superseded_at': 'superseded_at',
  }) -%}
  {%- if bitemporal -%}
    {%- do cfg.tblproperties.update({'historize.bitemporal': 'true'}) -%}
  {%- endif -%}
  {#- From events, or on a bitemporal table, a load closes or supersedes few versions
      spread over the open partition: deletion vectors mark them instead of copying the
      files they sit in, so that its writes follow its changes, unless the model's
      tblproperties say otherwise. -#}
  {%- if (input == 'changes' or bitemporal) and 'delta.enableDeletionVectors' not in cfg.tblproperties -%}
    {%- do cfg.tblproperties.update({'delta.enableDeletionVectors': 'true'}) -%}
  {%- endif -%}
  {#- From snapshots, a load that closes versions copies the open partition's files
      that hold them. Once the table's files reach deletion_vectors_from_mb that copy
      costs more than the pass that marks the versions instead (docs/benchmark.md), so
      the load that finds the table that large turns deletion vectors on, once, unless
      the model's tblproperties name the property. -#}
  {%- set deletion_vectors_from_mb = historize._read_option('deletion_vectors_from_mb', 4) -%}
  {%- if execute and (deletion_vectors_from_mb is not number or deletion_vectors_from_mb is boolean
        or deletion_vectors_from_mb < 0) -%}
    {{ exceptions.raise_compiler_error("historize: option 'deletion_vectors_from_mb' is '" ~ deletion_vectors_from_mb
        ~ "'; expected a number of megabytes, 0 or more") }}
  {%- endif -%}
  {%- if execute and 'delta.enableDeletionVectors' not in cfg.tblproperties -%}
    {%- do cfg.update({'large_table': {'bytes': (deletion_vectors_from_mb * 1048576) | int, 'megabytes': deletion_vectors_from_mb,
                                       'properties': {'delta.enableDeletionVectors': 'true'}}}) -%}
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
  {#- A bitemporal table keeps the current belief (superseded_at NULL) apart
      from the rows no longer believed, as it keeps open versions apart: a load
      reads and rewrites the current belief's open versions, and each row it
      supersedes moves once into a partition it never reads again. -#}
  {%- if bitemporal -%}
    {%- do cfg.update({'partition_by': [cfg.superseded_at] + cfg.partition_by,
                       'technical_columns': cfg.technical_columns + [cfg.recorded_at, cfg.superseded_at]}) -%}
  {%- endif -%}
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


{#- SQL builders of scd2_hist. Aliases: `src` the staged select, `hist` the
    history table, `chg` the change set. -#}


{#- The history table's columns, in order. -#}
{% macro _scd2_hist_table_columns(cfg, business_columns) %}
  {{ return([cfg.version_key] + business_columns + cfg.technical_columns) }}
{% endmacro %}


{#- Expressions of a new open version, in table column order, from a relation
    `alias` holding the select's columns. On a bitemporal table it is recorded
    by this run, and its version key names when. -#}
{% macro _scd2_hist_new_version_values(cfg, business_columns, alias, state_sql) %}
  {%- set identity = [] -%}
  {%- for name in cfg.unique_key -%}{%- do identity.append(historize._quote(name, alias)) -%}{%- endfor -%}
  {%- set values = [historize.hash_key(identity + [historize.load_timestamp_sql()]
        + ([historize.recorded_at_sql()] if cfg.bitemporal else []))] -%}
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
  {%- if cfg.bitemporal -%}
    {%- do values.extend([historize.recorded_at_sql(), 'cast(null as timestamp)']) -%}
  {%- endif -%}
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
    carries the guard's count of open versions, `_historize_scope_rows`, from
    the same query: a commit between the version read and the change set is
    then seen by the guard as a row committed after that version, or, if it
    only removed open versions, in both the change set and the count. With
    `open_version_columns`, a deleted key's row carries its open version's
    columns of that list as the struct `_historize_open_version`, from which
    the load writes the version closed. -#}
{% macro _scd2_hist_changes_sql(cfg, history, staged, business_columns, scope_rows=true, open_version_columns=none) %}
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
            {%- if open_version_columns %},
            named_struct(
                {%- for name in open_version_columns %}
                {{ historize._string_literal(name) }}, {{ historize._quote(name) }}{{ ',' if not loop.last }}
                {%- endfor %}
            ) as _historize_open_version
            {%- endif %}
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
            {%- if open_version_columns %}
            case when src._historize_in_source is null then open_versions._historize_open_version end as _historize_open_version,
            {%- endif %}
            src._historize_occurrences
        from keyed_source as src
        full outer join open_versions
            on {{ historize._key_join(keys, 'src', 'open_versions') }}
        left join closed_as_changed_by_this_load
            on {{ historize._key_join(keys, 'src', 'closed_as_changed_by_this_load') }}
    )
  {%- set keep = "classified._historize_action <> 'unchanged'" -%}
  {%- if scope_rows %},

    scope_rows as (
        select count(*) as _historize_scope_rows
        from {{ history }}
        where {{ historize._quote(cfg.valid_to) }} is null
    )

    select
        classified.*,
        scope_rows._historize_scope_rows
    from classified
    cross join scope_rows
    where {{ keep }}
  {%- else %}
    select classified.*
    from classified
    where {{ keep }}
  {%- endif %}
{% endmacro %}


{% macro _scd2_hist_close_assignments(cfg, state) %}
        {{ historize._quote(cfg.valid_to) }} = {{ historize.load_timestamp_sql() }},
        {{ historize._quote(cfg.state) }} = '{{ state }}',
        {{ historize._quote(cfg.load_run_id) }} = {{ historize._string_literal(historize.load_run_id()) }},
        {{ historize._quote(cfg.loaded_at) }} = {{ historize._utc_literal(run_started_at) }}
{% endmacro %}




{#- A snapshot's table made ready for its load, before anything else is written:
    the select staged again with its row_hash (`relations.staged`); with
    adopt_from, a first load takes over the snapshot's versions, checked before
    anything is written (_scd2_hist_adopt.sql), and the load goes on, on that
    table; an existing table is brought in line with the select (its keys are
    checked first, when it changes: the change set checks them otherwise) and,
    with the ledger, `load.timeline` says where this load lies among the loads.
    Events bring their table in line once they are checked (_scd2_hist_events.sql). -#}
{% macro _scd2_hist_ready_table(load, select_sql) %}
  {%- set cfg, columns, relations = load.cfg, load.columns, load.relations -%}
  {%- if cfg.input == 'changes' -%}
    {{ return(none) }}
  {%- endif -%}
  {%- call statement('stage_source') -%}
    {{ historize._scd2_hist_staged_snapshot_sql(cfg, relations.staged, columns, select_sql) }}
  {%- endcall -%}
  {%- if load.found.relation is none and cfg.adopt_from -%}
    {%- set adoption = historize._scd2_hist_adoption(cfg, load.history, load.select_columns, columns.business) -%}
    {%- set adopted_rows_sql = historize._scd2_hist_adoption_sql(cfg, adoption, columns.attributes) -%}
    {{ historize._adopt(cfg, load.history, adoption, adopted_rows_sql,
        historize._scd2_hist_adopted_versions_sql(cfg, adopted_rows_sql, columns.business), partition_by=cfg.partition_by) }}
    {%- do load.update({'found': {'relation': load.history, 'former': none}}) -%}
  {%- endif -%}
  {%- if load.found.relation is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set table_sync = historize._plan_table_sync(cfg, load.found,
        historize._columns_named(load.select_columns, columns.business), [cfg.version_key] + cfg.technical_columns,
        computes_hash=not columns.has_row_hash) -%}
  {{ historize._scd2_hist_assert_timelines(cfg, table_sync.state) }}
  {%- if table_sync.alters_table -%}
    {{ historize._assert_unique_key(relations.staged, cfg.unique_key, cfg.model_name) }}
  {%- endif -%}
  {%- if table_sync.large and 'delta.enableDeletionVectors' in table_sync.properties -%}
    {{ log(historize._scd2_hist_deletion_vectors_message(cfg, load.found.relation, table_sync.state.size_bytes), info=true) }}
  {%- endif -%}
  {%- if table_sync.alters_table or table_sync.plan.rehash -%}
    {{ historize._sync_history_table(cfg, load.found, load.history, table_sync, cfg.hash_column,
        hash_sql=none if columns.has_row_hash else historize.row_hash(columns.attributes),
        current_rows=historize._quote(cfg.valid_to) ~ ' is null') }}
  {%- endif -%}
  {#- The table's columns that the select no longer holds (retired), as they are
      named once the table is in line. -#}
  {%- set renamed = {} -%}
  {%- for old, new in table_sync.plan.renamed -%}{%- do renamed.update({old: new}) -%}{%- endfor -%}
  {%- set held = [cfg.version_key] + columns.business + cfg.technical_columns -%}
  {%- set retired_columns = [] -%}
  {%- for name in table_sync.state.order if renamed.get(name, name) not in held -%}
    {%- do retired_columns.append(renamed.get(name, name)) -%}
  {%- endfor -%}
  {%- do load.update({'timeline': historize._load_timeline(cfg, load.history, load.ledger) if load.ledger else none,
                      'retired_columns': retired_columns}) -%}
{% endmacro %}


{#- What a load says when it turns deletion vectors on for `relation`, a table of
    `size_bytes` bytes, at least deletion_vectors_from_mb. -#}
{% macro _scd2_hist_deletion_vectors_message(cfg, relation, size_bytes) %}
  {{ return("historize: " ~ cfg.model_name ~ ": " ~ relation ~ " holds " ~ (size_bytes / 1048576) | round(1)
      ~ " MB, at least deletion_vectors_from_mb (" ~ cfg.large_table.megabytes ~ "): turning on deletion vectors, "
      ~ "so that a load marks the versions it closes instead of copying the files they sit in. This raises the "
      ~ "table's reader protocol to 3 once: its readers need deletion vectors "
      ~ "(docs/scd2_hist.md#readers-without-deletion-vectors)") }}
{% endmacro %}


{#- Fails a load, before anything is written, whose model keeps one timeline
    and whose table keeps two (bitemporal), or the reverse: the table's rows
    hold the beliefs of its kind, and no load turns them into the other's. -#}
{% macro _scd2_hist_assert_timelines(cfg, state) %}
  {%- set table_bitemporal = state.properties.get('historize.bitemporal') == 'true' -%}
  {%- if table_bitemporal != cfg.bitemporal -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": bitemporal is "
        ~ ("true" if cfg.bitemporal else "false") ~ ", but its table " ~ state.relation ~ " was built "
        ~ ("with one timeline" if cfg.bitemporal else "bitemporal")
        ~ "; a table keeps the timelines it was built with (its rows are versions as "
        ~ ("true" if cfg.bitemporal else "believed") ~ "), so switching is a new model. Nothing was written") }}
  {%- endif -%}
{% endmacro %}


{#- The staged select `staged` again, with its row_hash unless it brings its own. -#}
{% macro _scd2_hist_staged_snapshot_sql(cfg, staged, columns, select_sql) %}
    create or replace temporary view {{ staged }} as
    select
        src.*{% if not columns.has_row_hash %},
        {{ historize.row_hash(columns.attributes, 'src') }} as {{ historize._quote(cfg.hash_column) }}{% endif %}
    from (
        {{ select_sql }}
    ) as src
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
