{#- Reads and validates every fivetran_history option in one place, and names
    the table's technical columns once. -#}
{% macro _fivetran_history_config() %}
  {%- set cfg = historize._history_config('fivetran_history') -%}
  {%- set tmax = historize._timestamp_text("option 'tmax'", historize._read_option('tmax', '9999-12-31 23:59:59.999')) -%}
  {%- set unmodified = historize._read_option('unmodified_string', '__fivetran_unmodified__') -%}
  {%- if execute and (unmodified is not string or unmodified == '') -%}
    {{ exceptions.raise_compiler_error("historize: option 'unmodified_string' is '" ~ unmodified ~ "'; expected a non-empty string") }}
  {%- endif -%}
  {%- do cfg.update({
      'op_column': historize._read_option('op_column', '_fivetran_op') | lower,
      'unmodified_string': unmodified,
      'tmax': tmax,
      'valid_from': '_fivetran_start',
      'valid_to': '_fivetran_end',
      'current_flag': '_fivetran_active',
      'synced': '_fivetran_synced',
      'operations': ['upsert', 'update', 'delete'],
  }) -%}
  {#- Written after the select's columns, in this order. -#}
  {%- do cfg.update({'technical_columns': [cfg.valid_from, cfg.valid_to, cfg.current_flag, cfg.synced]}) -%}
  {#- Active versions apart from inactive ones: a batch reads the active versions
      of its keys, and the inactive ones only of the keys its rules need them for
      (_fivetran_history_needed_versions_sql), and its MERGE rewrites files of the
      active partition only. The model's partition_by, if any, partitions further. -#}
  {%- do cfg.update({'partition_by': [cfg.current_flag]
        + historize._as_name_list('partition_by', config.get('partition_by') or [])}) -%}
  {#- adopt_from: a Fivetran history-mode table (schema.table) whose versions the
      model's first load takes over (adoption.sql); adopt_repair: the kinds of
      defect repaired (their rows set aside) instead of refused. -#}
  {%- do cfg.update(historize._adoption_options(cfg)) -%}
  {{ return(cfg) }}
{% endmacro %}


{#- Adoption: the Fivetran history-mode table adopt_from names, checked against
    the model (its key and data columns, of the model's types or ones they
    widen to; _fivetran_start, _fivetran_end, _fivetran_active), as
    _check_adoption and _set_aside_sql read it. -#}
{% macro _fivetran_history_adoption(cfg, history, columns) %}
  {%- set relation = historize._adopted_relation(cfg) -%}
  {%- set adoption = historize._adopted_columns(cfg, history, relation, columns.table_types[:(cfg.unique_key + columns.data) | length],
        [cfg.valid_from, cfg.valid_to, cfg.current_flag]) -%}
  {%- set held = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
  {%- do adoption.update({'described': 'table ' ~ relation, 'has_synced': cfg.synced in held}) -%}
  {{ return(adoption) }}
{% endmacro %}


{#- The adopted table's rows, each with its defect (_adoption_defects, or NULL),
    as the CTE `classified`. A key's versions are closed intervals in
    _fivetran_start order: one active at most (the last), each ending at or
    after its start and before the next starts. -#}
{% macro _fivetran_history_adoption_sql(cfg, adoption) %}
  {%- set keys = cfg.unique_key -%}
  {%- set by_key = historize._column_list(keys) -%}
    with adopted_rows as (
        select
            {%- for column in adoption.columns %}
            {{ historize._adopted_value(column, 'adopted') }} as {{ historize._quote(column[0]) }},
            {%- endfor %}
            cast({{ historize._quote(cfg.valid_from, 'adopted') }} as timestamp) as _historize_started_at,
            cast({{ historize._quote(cfg.valid_to, 'adopted') }} as timestamp) as _historize_ended_at,
            coalesce(cast({{ historize._quote(cfg.current_flag, 'adopted') }} as boolean), false) as _historize_active,
            {%- if adoption.has_synced %}
            cast({{ historize._quote(cfg.synced, 'adopted') }} as timestamp) as _historize_synced,
            {%- else %}
            {{ historize.load_timestamp_sql() }} as _historize_synced,
            {%- endif %}
            struct(adopted.*) as _historize_adopted_row
        from {{ adoption.relation }} as adopted
    ),

    first_checks as (
        select
            adopted_rows.*,
            case
                when {{ historize._column_list(keys, suffix=' is null', separator=' or ') }} then 'null_key'
                when _historize_started_at is null then 'missing_start'
                when _historize_active and row_number() over (
                    partition by {{ by_key }}
                    order by _historize_active desc, _historize_started_at desc) > 1 then 'two_open_versions'
                when _historize_ended_at is null or _historize_ended_at < _historize_started_at then 'empty_interval'
            end as _historize_first_defect
        from adopted_rows
    ),

    {#- The rows without a defect so far (first in each key's order), each against the one before it. #}
    classified as (
        select
            first_checks.*,
            coalesce(_historize_first_defect, case
                when lag(_historize_ended_at) over by_time >= _historize_started_at then 'overlapping_versions'
            end) as _historize_defect
        from first_checks
        window by_time as (partition by {{ by_key }} order by _historize_first_defect is not null, _historize_started_at,
            _historize_ended_at)
    )
{% endmacro %}


{#- The table's rows: the versions of `rows_sql` (_fivetran_history_adoption_sql)
    without defect, in the table's columns. -#}
{% macro _fivetran_history_adopted_versions_sql(cfg, rows_sql, columns) %}
    {{ rows_sql }}

    select
        {{ historize._column_list(cfg.unique_key + columns.data, 'classified', lines=true) }},
        classified._historize_started_at as {{ historize._quote(cfg.valid_from) }},
        classified._historize_ended_at as {{ historize._quote(cfg.valid_to) }},
        classified._historize_active as {{ historize._quote(cfg.current_flag) }},
        classified._historize_synced as {{ historize._quote(cfg.synced) }}
    from classified
    where classified._historize_defect is null
{% endmacro %}


{#- The batch's columns as fivetran_history uses them, checked: `data` (the
    columns a version holds besides the key), `types` (the table's type of
    each: the model YAML's data_type when it has one, since Fivetran's files
    carry every value as a string; else the select's), `table_types` (the
    table's (name, type) pairs, in table order), `has_synced`. -#}
{% macro _fivetran_history_columns(cfg, select_columns) %}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {{ historize._assert_columns_present(cfg.unique_key, select_names, 'unique_key', cfg.model_name) }}
  {{ historize._assert_columns_present([cfg.valid_from], select_names, 'the event time', cfg.model_name) }}
  {{ historize._assert_columns_present([cfg.op_column], select_names, 'op_column', cfg.model_name) }}
  {%- set types = {} -%}
  {%- for column in select_columns -%}
    {%- set documented = (model.columns.get(column.name) or model.columns.get(column.name | lower) or {}) -%}
    {%- set data_type = documented.get('data_type') if documented is mapping else documented.data_type -%}
    {%- do types.update({column.name | lower: data_type or column.data_type}) -%}
  {%- endfor -%}
  {%- set data = select_names | reject('in', cfg.unique_key + [cfg.op_column] + cfg.technical_columns) | list -%}
  {%- set table_types = [] -%}
  {%- for name in cfg.unique_key + data -%}{%- do table_types.append((name, types[name])) -%}{%- endfor -%}
  {%- do table_types.extend([(cfg.valid_from, 'timestamp'), (cfg.valid_to, 'timestamp'), (cfg.current_flag, 'boolean'),
        (cfg.synced, 'timestamp')]) -%}
  {{ return({
      'data': data,
      'types': types,
      'table_types': table_types,
      'has_synced': cfg.synced in select_names,
  }) }}
{% endmacro %}


{#- Caches the batch, so that the check and the MERGE read the same events,
    and checks it in one query: the key and the event time unique and not
    NULL, and every operation one of upsert, update or delete; unknown
    operations are named, the most frequent first, ties by name (NULL last),
    the same every run. Returns whether the batch holds one event per key,
    which _fivetran_history_one_event_changes_sql applies without a walk, and
    its first event's time (`first_event_at`, a UTC datetime; none when the
    batch is empty), which bounds the versions the MERGE can change. -#}
{% macro _fivetran_history_check_batch(cfg, staged) %}
  {{ historize._cache_staged(staged) }}
  {%- set keys_and_start = cfg.unique_key + [cfg.valid_from] -%}
  {%- set findings = run_query(historize._fivetran_history_batch_findings_sql(cfg, staged)).rows -%}
  {%- set offending_starts, unknown_ops, most_events, first_event_micros = [], [], [], [] -%}
  {%- for row in findings -%}
    {%- if row['_historize_finding'] == 'offending_start' -%}
      {%- do offending_starts.append(row) -%}
    {%- elif row['_historize_finding'] == 'unknown_op' -%}
      {%- do unknown_ops.append(("NULL" if row['_historize_op'] is none else "'" ~ row['_historize_op'] ~ "'") ~ " x" ~ row['_historize_n']) -%}
    {%- else -%}
      {%- do most_events.append(row['_historize_most_events']) -%}
      {%- do first_event_micros.append(row['_historize_first_event_micros']) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ historize._refuse_key_findings(offending_starts, keys_and_start, cfg.model_name, label='the key and ' ~ cfg.valid_from) }}
  {%- if unknown_ops -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ cfg.model_name ~ ": unknown operation in " ~ cfg.op_column ~ ": " ~ unknown_ops | join(', ')
        ~ "; allowed: " ~ cfg.operations | join(', ') ~ ". Nothing was written") }}
  {%- endif -%}
  {{ return({'one_event_per_key': most_events[0] == 1,
             'first_event_at': none if first_event_micros[0] is none
                 else modules.datetime.datetime(1970, 1, 1) + modules.datetime.timedelta(microseconds=first_event_micros[0] | int)}) }}
{% endmacro %}


{#- What the batch check reads, one row per finding (`_historize_finding`):
      offending_start  a key and event time NULL or duplicated, as
                       _key_findings_sql gives it (its columns first)
      unknown_op       an operation not allowed (`_historize_op`, NULL for a
                       NULL one) and its events (`_historize_n`), the five most frequent
      events_per_key   the most events of one key (`_historize_most_events`) and
                       the batch's first event time, in microseconds since
                       1970-01-01 UTC (`_historize_first_event_micros`, NULL
                       when the batch is empty)
    each kind in the order its refusal names them. -#}
{% macro _fivetran_history_batch_findings_sql(cfg, staged) %}
  {%- set keys_and_start = cfg.unique_key + [cfg.valid_from] -%}
  {%- set op = historize._quote(cfg.op_column) -%}
  {%- set finding_columns = [] -%}
  {%- for name in keys_and_start -%}{%- do finding_columns.append(historize._quote(name)) -%}{%- endfor -%}
  {%- do finding_columns.extend(['occurrences', 'has_null', 'offending_keys', 'null_rows']) %}
    with offending_starts as (
        {{ historize._key_findings_sql(staged, keys_and_start) | indent(8) }}
    ),

    unknown_ops as (
        select
            cast({{ op }} as string) as op,
            count(*) as n
        from {{ staged }}
        where {{ op }} is null or lower({{ op }}) not in ('{{ cfg.operations | join("', '") }}')
        group by {{ op }}
        order by n desc, op asc nulls last
        limit 5
    ),

    events_per_key as (
        select
            count(*) as events,
            min(cast({{ historize._quote(cfg.valid_from) }} as timestamp)) as first_event_at
        from {{ staged }}
        group by {{ historize._column_list(cfg.unique_key) }}
    )

    select
        {%- for column in finding_columns %}
        offending_starts.{{ column }},
        {%- endfor %}
        'offending_start' as _historize_finding,
        cast(null as string) as _historize_op,
        cast(null as bigint) as _historize_n,
        cast(null as bigint) as _historize_most_events,
        cast(null as bigint) as _historize_first_event_micros
    from offending_starts
    union all
    select
        {%- for column in finding_columns %}
        null as {{ column }},
        {%- endfor %}
        'unknown_op' as _historize_finding,
        unknown_ops.op as _historize_op,
        unknown_ops.n as _historize_n,
        null as _historize_most_events,
        null as _historize_first_event_micros
    from unknown_ops
    union all
    select
        {%- for column in finding_columns %}
        null as {{ column }},
        {%- endfor %}
        'events_per_key' as _historize_finding,
        null as _historize_op,
        null as _historize_n,
        max(events_per_key.events) as _historize_most_events,
        unix_micros(min(events_per_key.first_event_at)) as _historize_first_event_micros
    from events_per_key
    order by
        _historize_finding asc,
        has_null desc,
        occurrences desc,
        {{ historize._column_list(keys_and_start, suffix=' asc') }},
        _historize_n desc,
        _historize_op asc nulls last
{%- endmacro %}


{#- SQL builders of fivetran_history. Aliases: `batch` the staged batch of
    events, `hist` the history table, `chg` the change set.

    The batch is walked per key in _fivetran_start order with window functions,
    which gives every version the rules want for the keys of the batch. The
    MERGE then applies only the difference from the versions already there, so
    a replayed batch writes nothing and a batch is one commit. -#}

{#- The batch `staged` typed, one row per event: its key and data columns,
    `_historize_event_at`, `_historize_op` (lower case) and `_historize_synced`. -#}
{% macro _fivetran_history_batch_sql(cfg, staged, columns) %}
  {%- set q = historize._quote -%}
    select
        {%- for name in cfg.unique_key %}
        cast({{ q(name) }} as {{ columns.types[name] }}) as {{ q(name) }},
        {%- endfor %}
        {%- for name in columns.data %}
        {{ q(name) }},
        {%- endfor %}
        cast({{ q(cfg.valid_from) }} as timestamp) as _historize_event_at,
        lower({{ q(cfg.op_column) }}) as _historize_op,
        {% if columns.has_synced %}cast({{ q(cfg.synced) }} as timestamp){% else %}{{ historize.load_timestamp_sql() }}{% endif %} as _historize_synced
    from {{ staged }}
{% endmacro %}


{#- The versions of the keys of `events` (a step of the batch typed, as
    _fivetran_history_batch_sql gives it) that the rules read, given
    `earliest` (a step of each key's first upsert or update,
    `_historize_earliest`): every key's
    active version, which is its latest; and its inactive versions only when
    its first upsert or update is at or before its active version's start, or
    it has no active version. Otherwise the latest version before the key's
    events is the active one, the one an update fills from and an event closes,
    and no version after it is replaced; a delete closes only an active version. -#}
{% macro _fivetran_history_needed_versions_sql(cfg, history, events, earliest) %}
  {%- set keys, q = cfg.unique_key, historize._quote -%}
    select hist.*
    from {{ history }} as hist
    left semi join {{ events }} as batch_event
        on {{ historize._key_join(keys, 'hist', 'batch_event') }}
    where hist.{{ q(cfg.current_flag) }}
    union all
    select hist.*
    from {{ history }} as hist
    left semi join (
        select {{ historize._column_list(keys, 'first_change') }}
        from {{ earliest }} as first_change
        left anti join {{ history }} as active
            on {{ historize._key_join(keys, 'first_change', 'active') }}
            and first_change._historize_earliest > active.{{ q(cfg.valid_from) }}
            and active.{{ q(cfg.current_flag) }}
    ) as needing_inactive
        on {{ historize._key_join(keys, 'hist', 'needing_inactive') }}
    where not hist.{{ q(cfg.current_flag) }}
{% endmacro %}


{#- The change set of a batch: every version the batch's events give their
    keys, compared with the versions already there. `_historize_action`: new
    (a version to insert), changed (a version whose values, end or flag
    differ), deleted (a version the batch replaces: a re-delivered event at
    another time), unchanged (left out). Each step reads the one before it
    once (Spark computes a CTE again at each read): the base version travels
    with the events, and both sides of the comparison meet in one group by
    key and start. Its steps:
      batch ... base       the batch typed, one row per event; the versions
                           of its keys the rules need
                           (_fivetran_history_needed_versions_sql), each marked
                           whether it began before the key's earliest upsert
                           or update (the batch leaves those as they are, but
                           for the latest, `base`, which it may close)
      events ... walked    the events that apply, walked per key in time
                           order, with the latest value given for each column
                           so far; each carries its key's base version
      versioned ... versions_by_start
                           both sides by key and start: the version the walk
                           wants there (`wanted`) and the one the table has
                           there that the batch may change (`affected`)
      compared             the two sides compared -#}
{% macro _fivetran_history_changes_sql(cfg, history, staged, columns) %}
  {%- set keys, data_columns, q = cfg.unique_key, columns.data, historize._quote -%}
  {%- set by_key = 'partition by ' ~ historize._column_list(keys) ~ ' order by _historize_event_at' -%}
  {#- The data of each version struct (_fivetran_history_version_struct): the
      key's base version as it is (`base_data`), each event's new version
      (`new_data`), the base version as the batch closes it
      (`closed_base_data`), the table's versions (`table_data`). -#}
  {%- set base_data, new_data, closed_base_data, table_data = [], [], [], [] -%}
  {%- for name in data_columns -%}
    {%- set given = 'walked.' ~ q('_historize_given_' ~ loop.index0) -%}
    {%- set base_value = 'walked._historize_base_version.' ~ q('c' ~ loop.index0) -%}
    {%- do base_data.append('base.' ~ q(name)) -%}
    {%- do new_data.append('case when ' ~ given ~ ' is null then ' ~ base_value ~ ' else ' ~ given ~ '.v end') -%}
    {%- do closed_base_data.append(base_value) -%}
    {%- do table_data.append('ranked.' ~ q(name)) -%}
  {%- endfor -%}
  {#- (a struct's field is on one line; the struct macro indents the rest) -#}
  {%- set new_end = "case\n        when walked._historize_next_op is null then " ~ ("timestamp'" ~ cfg.tmax ~ "+00:00'")
      ~ "\n        when walked._historize_next_op = 'delete' then walked._historize_next_event_at"
      ~ "\n        else walked._historize_next_event_at - interval 1 millisecond\n    end" -%}
  {%- set closed_end = "case when walked._historize_op = 'delete' then walked._historize_event_at"
      ~ "\n        else walked._historize_event_at - interval 1 millisecond end" -%}
    with
    batch as (
        {{ historize._fivetran_history_batch_sql(cfg, staged, columns) | indent(4) }}
    ),

    earliest as (
        select
            {{ historize._column_list(keys, lines=true) }},
            min(_historize_event_at) as _historize_earliest
        from batch
        where _historize_op in ('upsert', 'update')
        group by {{ historize._column_list(keys) }}
    ),

    needed_versions as (
        {{ historize._fivetran_history_needed_versions_sql(cfg, history, 'batch', 'earliest') | indent(4) }}
    ),

    existing as (
        select
            hist.*,
            earliest._historize_earliest,
            earliest._historize_earliest is null or hist.{{ q(cfg.valid_from) }} < earliest._historize_earliest as _historize_before_batch
        from needed_versions as hist
        left join earliest on {{ historize._key_join(keys, 'hist', 'earliest') }}
    ),

    ranked as (
        select
            *,
            row_number() over (partition by {{ historize._column_list(keys) }}, _historize_before_batch order by {{ q(cfg.valid_from) }} desc) as _historize_rank
        from existing
    ),

    base as (
        select
            *,
            {{ q(cfg.current_flag) }} or (_historize_earliest is not null and {{ q(cfg.valid_to) }} >= _historize_earliest) as _historize_is_current
        from ranked
        where _historize_before_batch and _historize_rank = 1
    ),

    -- a delete before the base version began has nothing to close
    events as (
        select
            batch.*,
            base.{{ q(cfg.valid_from) }} is not null as _historize_has_base,
            coalesce(base._historize_is_current, false) as _historize_base_is_current,
            base.{{ q(cfg.valid_from) }} as _historize_base_start,
            {{ historize._fivetran_history_version_struct(base_data, 'base.' ~ q(cfg.valid_to), 'base.' ~ q(cfg.current_flag),
                'base.' ~ q(cfg.synced)) }} as _historize_base_version
        from batch
        left join base on {{ historize._key_join(keys, 'batch', 'base') }}
        where not (batch._historize_op = 'delete' and coalesce(batch._historize_event_at < base.{{ q(cfg.valid_from) }}, false))
    ),

    -- an update with no version at all before it is ignored: with no base
    -- version, only an upsert before it gives it one (an ignored update does not)
    counted as (
        select
            *,
            coalesce(sum(case when _historize_op = 'upsert' then 1 else 0 end)
                over ({{ by_key }} rows between unbounded preceding and 1 preceding), 0) as _historize_upserts_before
        from events
    ),

    applicable as (
        select
            *,
            lag(_historize_op) over ({{ by_key }}) as _historize_previous_op
        from counted
        where not (_historize_op = 'update' and not _historize_has_base and _historize_upserts_before = 0)
    ),

    -- a delete with no current version does nothing
    kept as (
        select *
        from applicable
        where _historize_op <> 'delete'
            or case when _historize_previous_op is null then _historize_base_is_current else _historize_previous_op <> 'delete' end
    ),

    walked as (
        select
            *,
            lead(_historize_op) over ({{ by_key }}) as _historize_next_op,
            lead(_historize_event_at) over ({{ by_key }}) as _historize_next_event_at,
            row_number() over ({{ by_key }}) as _historize_position
            {%- for name in data_columns %},
            -- the latest value given for the column so far (NULL when only unmodified)
            last_value(
                case when _historize_op <> 'delete' and not (cast({{ q(name) }} as string) <=> {{ historize._string_literal(cfg.unmodified_string) }})
                    then named_struct('v', cast({{ q(name) }} as {{ columns.types[name] }})) end,
                true
            ) over ({{ by_key }} rows between unbounded preceding and current row) as {{ q('_historize_given_' ~ loop.index0) }}
            {%- endfor %}
        from kept
    ),

    -- each event's new version, and its key's base version closed where the
    -- first event begins
    versioned as (
        select
            walked.*,
            {{ historize._fivetran_history_version_struct(new_data, new_end, 'walked._historize_next_op is null',
                'walked._historize_synced') | indent(12) }} as _historize_new_version,
            {{ historize._fivetran_history_version_struct(closed_base_data, closed_end, 'false',
                'walked._historize_base_version._historize_synced') | indent(12) }} as _historize_closed_base
        from walked
    ),

    generated as (
        select
            {{ historize._column_list(keys, 'versioned', lines=true) }},
            generated_version._historize_start,
            generated_version._historize_side,
            generated_version._historize_version
        from versioned
        lateral view inline(filter(array(
            case when versioned._historize_op <> 'delete' then named_struct(
                '_historize_start', versioned._historize_event_at, '_historize_side', 'wanted',
                '_historize_version', versioned._historize_new_version) end,
            case when versioned._historize_position = 1 and versioned._historize_base_is_current then named_struct(
                '_historize_start', versioned._historize_base_start, '_historize_side', 'wanted',
                '_historize_version', versioned._historize_closed_base) end,
            case when versioned._historize_position = 1 and versioned._historize_base_is_current then named_struct(
                '_historize_start', versioned._historize_base_start, '_historize_side', 'affected',
                '_historize_version', versioned._historize_base_version) end
        ), generated_version -> generated_version is not null)) generated_version
            as _historize_start, _historize_side, _historize_version
    ),

    sides as (
        select
            {{ historize._column_list(keys, 'generated', lines=true) }},
            generated._historize_start,
            generated._historize_side,
            generated._historize_version
        from generated
        union all
        select
            {{ historize._column_list(keys, 'ranked', lines=true) }},
            ranked.{{ q(cfg.valid_from) }} as _historize_start,
            'affected' as _historize_side,
            {{ historize._fivetran_history_version_struct(table_data, 'ranked.' ~ q(cfg.valid_to),
                'ranked.' ~ q(cfg.current_flag), 'ranked.' ~ q(cfg.synced)) | indent(12) }} as _historize_version
        from ranked
        where not ranked._historize_before_batch
    ),

    versions_by_start as (
        select
            {{ historize._column_list(keys, 'sides', lines=true) }},
            sides._historize_start,
            first(case when sides._historize_side = 'wanted' then sides._historize_version end, true) as wanted,
            first(case when sides._historize_side = 'affected' then sides._historize_version end, true) as affected
        from sides
        group by {{ historize._column_list(keys, 'sides') }}, sides._historize_start
    ),

    compared as (
        select
            {{ historize._column_list(keys, 'by_start', lines=true) }},
            {%- for name in data_columns %}
            by_start.wanted.{{ q('c' ~ loop.index0) }} as {{ q(name) }},
            {%- endfor %}
            by_start._historize_start as {{ q(cfg.valid_from) }},
            by_start.wanted._historize_end as {{ q(cfg.valid_to) }},
            by_start.wanted._historize_active as {{ q(cfg.current_flag) }},
            by_start.wanted._historize_synced as {{ q(cfg.synced) }},
            case
                when by_start.wanted is null then 'deleted'
                when by_start.affected is null then 'new'
                when by_start.wanted <=> by_start.affected then 'unchanged'
                else 'changed'
            end as _historize_action
        from versions_by_start as by_start
    )

    select *
    from compared
    where _historize_action <> 'unchanged'
{% endmacro %}


{#- The change set of a batch with one event per key (the batch check counts
    them): the walk's rules, which one event per key turns into a comparison
    of that event with its key's versions, without a walk. Per key, its event at `t`:
      - an upsert, or an update after a version, wants its new version at `t`
        (an unmodified cell filled from the base version), active: new, or
        changed where the table has another version at `t`;
      - the base version (the latest that began before `t`; for a delete, the
        latest, which a delete before it began leaves alone) is closed where
        the event begins when it is current (for a delete, when it is active);
      - an upsert or update replaces the versions from `t` on: those it does
        not rewrite are deleted.
    A key's active version is its latest. So an event that follows it (a
    delete, or an event after its start) has it as its base, and no version at
    or after `t`: the active version is all it reads. The other upserts and
    updates (late ones, and those of a key with no active version) read every
    version of their key. Versions travel as structs with their start
    (_fivetran_history_version_struct). Its steps:
      batch          the batch typed, one row per event
      with_active    each event with its key's active version (the table's
                     active partition read once), and whether it follows it
      needing_versions
                     the upserts and updates that do not
      key_versions   each of those, with no version, then with each version of
                     its key
      by_key         each key's event, its base version, its version at `t`
                     and its versions after `t`: for an event that follows its
                     active version, that version as base and none at or after `t`
      decided        the event's new version, and its base version closed
      written        the rows to write, each with its action -#}
{% macro _fivetran_history_one_event_changes_sql(cfg, history, staged, columns) %}
  {%- set keys, data_columns, q = cfg.unique_key, columns.data, historize._quote -%}
  {%- set version = historize._fivetran_history_version_struct -%}
  {%- set row = historize._fivetran_history_change_row -%}
  {%- set active_data, table_data, no_data, new_data, base_data = [], [], [], [], [] -%}
  {%- for name in data_columns -%}
    {%- do active_data.append('active.' ~ q(name)) -%}
    {%- do table_data.append('hist.' ~ q(name)) -%}
    {%- do no_data.append('cast(null as ' ~ columns.types[name] ~ ')') -%}
    {%- do new_data.append('case when cast(by_key.' ~ q(name) ~ ' as string) <=> ' ~ historize._string_literal(cfg.unmodified_string)
          ~ ' then by_key._historize_base.' ~ q('c' ~ loop.index0) ~ ' else cast(by_key.' ~ q(name) ~ ' as ' ~ columns.types[name] ~ ') end') -%}
    {%- do base_data.append('by_key._historize_base.' ~ q('c' ~ loop.index0)) -%}
  {%- endfor -%}
  {%- set at = 'key_versions._historize_version._historize_start' -%}
    with
    batch as (
        {{ historize._fivetran_history_batch_sql(cfg, staged, columns) | indent(4) }}
    ),

    with_active as (
        select
            batch.*,
            active.{{ q(cfg.valid_from) }} is not null
                and (batch._historize_op = 'delete' or active.{{ q(cfg.valid_from) }} < batch._historize_event_at) as _historize_follows_active,
            case when active.{{ q(cfg.valid_from) }} is not null
                then {{ version(active_data, 'active.' ~ q(cfg.valid_to), 'active.' ~ q(cfg.current_flag),
                    'active.' ~ q(cfg.synced), start='active.' ~ q(cfg.valid_from)) | indent(16) }}
            end as _historize_active_version
        from batch
        left join {{ history }} as active
            on {{ historize._key_join(keys, 'batch', 'active') }}
            and active.{{ q(cfg.current_flag) }}
    ),

    needing_versions as (
        select *
        from with_active
        where not _historize_follows_active and _historize_op <> 'delete'
    ),

    key_versions as (
        select
            needing_versions.*,
            {{ version(no_data, 'cast(null as timestamp)', 'cast(null as boolean)', 'cast(null as timestamp)',
                start='cast(null as timestamp)') | indent(12) }} as _historize_version
        from needing_versions
        union all
        select /*+ broadcast(needing_versions) */
            needing_versions.*,
            {{ version(table_data, 'hist.' ~ q(cfg.valid_to), 'hist.' ~ q(cfg.current_flag),
                'hist.' ~ q(cfg.synced), start='hist.' ~ q(cfg.valid_from)) | indent(12) }} as _historize_version
        from {{ history }} as hist
        inner join needing_versions
            on {{ historize._key_join(keys, 'hist', 'needing_versions') }}
    ),

    -- (no version at `t`, none after it: typed as the active version's struct)
    by_key as (
        select
            {{ historize._column_list(keys + data_columns, 'with_active', lines=true) }},
            with_active._historize_event_at,
            with_active._historize_op,
            with_active._historize_synced,
            with_active._historize_active_version as _historize_base,
            if(false, with_active._historize_active_version, null) as _historize_at_event,
            filter(array(with_active._historize_active_version), no_version -> false) as _historize_replaced
        from with_active
        where with_active._historize_follows_active or with_active._historize_op = 'delete'
        union all
        select
            {{ historize._column_list(keys, 'key_versions', lines=true) }},
            {%- for name in data_columns %}
            any_value(key_versions.{{ q(name) }}) as {{ q(name) }},
            {%- endfor %}
            any_value(key_versions._historize_event_at) as _historize_event_at,
            any_value(key_versions._historize_op) as _historize_op,
            any_value(key_versions._historize_synced) as _historize_synced,
            max_by(key_versions._historize_version, {{ at }}) filter (
                where {{ at }} < key_versions._historize_event_at
            ) as _historize_base,
            max_by(key_versions._historize_version, {{ at }}) filter (
                where {{ at }} = key_versions._historize_event_at
            ) as _historize_at_event,
            collect_list(key_versions._historize_version) filter (
                where {{ at }} > key_versions._historize_event_at
            ) as _historize_replaced
        from key_versions
        group by {{ historize._column_list(keys, 'key_versions') }}
    ),

    decided as (
        select
            by_key.*,
            case when by_key._historize_op = 'upsert' or (by_key._historize_op = 'update' and by_key._historize_base is not null)
                then {{ version(new_data, ("timestamp'" ~ cfg.tmax ~ "+00:00'"), 'true', 'by_key._historize_synced', start='by_key._historize_event_at') | indent(16) }}
            end as _historize_new,
            case
                when (by_key._historize_op = 'delete' and by_key._historize_base._historize_start <= by_key._historize_event_at
                        and by_key._historize_base._historize_active)
                    or (by_key._historize_op <> 'delete' and (by_key._historize_base._historize_active
                        or by_key._historize_base._historize_end >= by_key._historize_event_at))
                then {{ version(base_data, "case when by_key._historize_op = 'delete' then by_key._historize_event_at "
                    ~ "else by_key._historize_event_at - interval 1 millisecond end", 'false', 'by_key._historize_base._historize_synced',
                    start='by_key._historize_base._historize_start') | indent(16) }}
            end as _historize_closed_base
        from by_key
    ),

    written as (
        select
            {{ historize._column_list(keys, 'decided', lines=true) }},
            written_row.*
        from decided
        lateral view inline(concat(
            filter(array(
                case
                    when decided._historize_new is not null and not decided._historize_new <=> decided._historize_at_event
                        then {{ row(cfg, columns, 'decided._historize_new',
                            "case when decided._historize_at_event is null then 'new' else 'changed' end") | indent(24) }}
                    when decided._historize_new is null and decided._historize_at_event is not null
                        then {{ row(cfg, columns, 'decided._historize_at_event', "'deleted'") | indent(24) }}
                end,
                case when decided._historize_closed_base is not null
                    then {{ row(cfg, columns, 'decided._historize_closed_base', "'changed'") | indent(20) }}
                end
            ), written_row -> written_row is not null),
            transform(decided._historize_replaced, replaced -> {{ row(cfg, columns, 'replaced', "'deleted'") | indent(16) }})
        )) written_row
    )

    select *
    from written
{% endmacro %}


{#- A row of the change set, from a version struct `version`
    (_fivetran_history_version_struct, with its start) and its `action`: one
    struct whose fields are the change set's columns after the key (the data
    columns, _fivetran_start, _fivetran_end, _fivetran_active,
    _fivetran_synced, `_historize_action`). -#}
{% macro _fivetran_history_change_row(cfg, columns, version, action) %}
  {%- set text = historize._string_literal -%}
  {%- set fields = [] -%}
  {%- for name in columns.data -%}
    {%- do fields.append(text(name) ~ ", " ~ version ~ "." ~ historize._quote('c' ~ loop.index0)) -%}
  {%- endfor -%}
  {%- do fields.extend([text(cfg.valid_from) ~ ", " ~ version ~ "._historize_start", text(cfg.valid_to) ~ ", " ~ version ~ "._historize_end",
        text(cfg.current_flag) ~ ", " ~ version ~ "._historize_active", text(cfg.synced) ~ ", " ~ version ~ "._historize_synced",
        "'_historize_action', " ~ action]) -%}
  {{- return('named_struct(\n    ' ~ fields | join(',\n    ') ~ '\n)') -}}
{% endmacro %}


{#- A version as one struct, for both sides of the comparison: the data
    columns by position (c0, c1, ...; any name may be a column's), then its
    end, flag and sync time; with `start`, its start first. -#}
{% macro _fivetran_history_version_struct(data_values, valid_to, current_flag, synced, start=none) %}
  {%- set fields = ["'_historize_start', " ~ start] if start is not none else [] -%}
  {%- for value in data_values -%}{%- do fields.append("'c" ~ loop.index0 ~ "', " ~ value) -%}{%- endfor -%}
  {%- do fields.extend(["'_historize_end', " ~ valid_to, "'_historize_active', " ~ current_flag, "'_historize_synced', " ~ synced]) -%}
  {{- return('named_struct(\n    ' ~ fields | join(',\n    ') ~ '\n)') -}}
{% endmacro %}


{#- A load's one MERGE: its source computes the change set of the batch
    `staged` (the batch was checked before) and it writes the difference:
    delete the replaced versions, update the changed ones, insert the new.
    It is the load's one read of the table, so Delta's commit fails it if
    another run wrote what it read: no version read, no guard. Delta's result
    of it gives the counts by action: each new version is a row inserted,
    each changed one a row updated, each replaced one a row deleted.
    A batch changes only the versions that end or begin at or after its first
    event (`first_event_at`, none for an empty batch): those its events close,
    re-deliver or replace. An active version ends at the far-off time (or is
    NULL, in a table taken over), so that bound, on the table's columns alone
    in the `on` clause, lets Delta skip by their file statistics the files of
    versions that ended before the batch. -#}
{% macro _fivetran_history_merge_sql(cfg, history, staged, columns, one_event_per_key=false, first_event_at=none) %}
  {%- set written = columns.data + [cfg.valid_to, cfg.current_flag, cfg.synced] -%}
  {%- set table_columns = cfg.unique_key + columns.data + cfg.technical_columns -%}
  {%- set q = historize._quote -%}
merge into {{ history }} as hist
using (
    {%- if one_event_per_key %}
    {{ historize._fivetran_history_one_event_changes_sql(cfg, history, staged, columns) | indent(4) }}
    {%- else %}
    {{ historize._fivetran_history_changes_sql(cfg, history, staged, columns) | indent(4) }}
    {%- endif %}
) as chg
on {{ historize._key_join(cfg.unique_key, 'hist', 'chg') }}
    and hist.{{ q(cfg.valid_from) }} = chg.{{ q(cfg.valid_from) }}
    {%- if first_event_at is not none %}
    {%- set first_event = historize._utc_literal(first_event_at) %}
    and (
        hist.{{ q(cfg.valid_to) }} >= {{ first_event }}
        or hist.{{ q(cfg.valid_from) }} >= {{ first_event }}
        or hist.{{ q(cfg.valid_to) }} is null
    )
    {%- endif %}
{{ historize._write_versions_by_action(written, table_columns) }}
{% endmacro %}
