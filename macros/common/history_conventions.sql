{#- How a history table writes its versions: its key, validity columns, how
    "open" and "deleted" show, half-open or closed intervals, a version
    column. A table built by historize records its kind and key in its
    properties (historize.kind, historize.unique_key, historize.valid_from,
    historize.valid_to); otherwise the kind is recognised by its columns and
    the key must be given. Every part can be given explicitly, which is how
    other tables (dbt snapshots, sources) are described. `used_by` names the
    macro or test in messages; `needs_key` says whether it needs the key.

    Returns a mapping with SQL fragments for a relation aliased `alias`:
      kind                          scd2_hist, scd_type6, fivetran_history, or none
      columns                       the table's lowercase column names, in order; none for a
                                    table not built yet (`dbt compile` before its first load)
      unique_key                    key column names
      valid_from, valid_to          column names
      open_sql                      predicate: the version is open (valid to infinity)
      end_sql                       the version's end, NULL when open
      interval                      'half_open' ([from, to)) or 'closed' ([from, to])
      step                          for closed intervals: what separates consecutive versions
      deleted_sql                   predicate: the version ended because its key was deleted;
                                    it may use the _historize_* columns of _history_versions_sql
                                    (Fivetran's tables record a delete only as a gap after it)
      version_column                a 1, 2, 3 ... column, or none
      history_columns               the columns the kind's materialization writes beside the
                                    select's and the version key (`<table>_key`), as its config
                                    macro names them; none for a table of no known kind
      bitemporal                    whether the table keeps every belief (recorded_at, superseded_at)
      belief_sql                    predicate: the row is part of the belief at `known_at` (a SQL
                                    expression; none: the current belief); none on a table of one
                                    timeline, where `known_at` is refused -#}
{% macro _history_conventions(relation, used_by, unique_key=none, valid_from=none, valid_to=none, open_when=none,
                              interval=none, step=none, deleted_when=none, version_column=none, alias='v',
                              needs_key=true, known_at=none) %}
  {%- set table = historize._history_table_facts(relation, used_by) -%}
  {#- A table not built yet (_history_table_planned_facts) has no columns to check. -#}
  {%- set columns_known = table.columns is not none -%}
  {%- set names = table.columns if columns_known else [] -%}
  {%- set recorded = table.properties -%}
  {%- set kind = recorded.get('historize.kind') or historize._history_kind_by_columns(names) -%}
  {%- set q = alias ~ '.' -%}
  {%- if kind == 'scd2_hist' -%}
    {%- set defaults = {'valid_from': 'version_started_at', 'valid_to': 'version_ended_at',
        'open_when': q ~ 'version_ended_at is null', 'interval': 'half_open',
        'deleted_when': q ~ "version_state = 'deleted'", 'version_column': none,
        'history_columns': ['row_hash', 'version_started_at', 'version_ended_at', 'version_state', 'load_run_id',
                            'loaded_at']} -%}
  {%- elif kind == 'scd_type6' -%}
    {%- set defaults = {'valid_from': 'effective_from', 'valid_to': 'effective_to',
        'open_when': q ~ 'current_flag', 'interval': 'half_open',
        'deleted_when': q ~ "change_reason = 'deleted_in_source'",
        'version_column': 'version' if 'version' in names or not columns_known else none,
        'history_columns': ['effective_from', 'effective_to', 'current_flag', 'version', 'change_reason', '_hash']} -%}
  {%- elif kind == 'fivetran_history' -%}
    {%- set defaults = {'valid_from': '_fivetran_start', 'valid_to': '_fivetran_end',
        'open_when': q ~ '_fivetran_active', 'interval': 'closed',
        'deleted_when': 'not ' ~ q ~ '_historize_is_open and (' ~ q ~ '_historize_next_from is null or '
            ~ q ~ '_historize_next_from <> ' ~ q ~ '_historize_valid_to + interval 1 millisecond)',
        'version_column': none, 'history_columns': ['_fivetran_start', '_fivetran_end', '_fivetran_active', '_fivetran_synced']} -%}
  {%- else -%}
    {%- set defaults = {'valid_from': none, 'valid_to': none, 'open_when': none,
        'interval': 'half_open', 'deleted_when': 'false', 'version_column': none, 'history_columns': none} -%}
  {%- endif -%}
  {%- set valid_from = valid_from or recorded.get('historize.valid_from') or defaults.valid_from -%}
  {%- set valid_to = valid_to or recorded.get('historize.valid_to') or defaults.valid_to -%}
  {%- set keys = historize._as_name_list('unique_key', unique_key) if unique_key
        else historize._as_name_list('unique_key', (recorded.get('historize.unique_key') or '').split(',') | reject('equalto', '') | list) -%}
  {%- if execute -%}
    {%- if valid_from is none or valid_to is none -%}
      {{ exceptions.raise_compiler_error("historize: " ~ used_by ~ ": " ~ relation ~ " is not a historize table "
          ~ "(it records no historize.kind and its columns are " ~ names | join(', ') ~ "); give valid_from and valid_to") }}
    {%- endif -%}
    {%- if needs_key and not keys -%}
      {{ exceptions.raise_compiler_error("historize: " ~ used_by ~ ": " ~ relation ~ " records no unique_key "
          ~ "(only tables built or loaded by historize's materializations do); give unique_key") }}
    {%- endif -%}
    {%- for argument, columns in [('unique_key', keys), ('valid_from', [valid_from]), ('valid_to', [valid_to]),
          ('version_column', [version_column] if version_column else [])] if columns_known -%}
      {%- set unknown = columns | map('lower') | reject('in', names) | list -%}
      {%- if unknown -%}
        {{ exceptions.raise_compiler_error("historize: " ~ used_by ~ ": " ~ argument ~ " names " ~ unknown | join(', ')
            ~ ", which " ~ relation ~ " does not have; its columns are " ~ names | join(', ')) }}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set interval = interval or defaults.interval -%}
  {%- if interval not in ['half_open', 'closed'] and execute -%}
    {{ exceptions.raise_compiler_error("historize: option 'interval' is '" ~ interval ~ "'; allowed: half_open, closed") }}
  {%- endif -%}
  {%- set open_sql = open_when or defaults.open_when or (q ~ historize._quote(valid_to or 'valid_to') ~ ' is null') -%}
  {%- set bitemporal = recorded.get('historize.bitemporal') == 'true' -%}
  {%- if not bitemporal -%}
    {%- if known_at is not none and execute -%}
      {{ exceptions.raise_compiler_error("historize: " ~ used_by ~ ": known_at applies to a bitemporal table; "
          ~ relation ~ " keeps one timeline, what was true when, and no earlier belief") }}
    {%- endif -%}
    {%- set belief_sql = none -%}
  {%- elif known_at is none -%}
    {%- set belief_sql = q ~ historize._quote('superseded_at') ~ ' is null' -%}
  {%- else -%}
    {%- set belief_sql = '(' ~ q ~ historize._quote('recorded_at') ~ ' <= ' ~ known_at ~ ' and (' ~ q
          ~ historize._quote('superseded_at') ~ ' is null or ' ~ q ~ historize._quote('superseded_at') ~ ' > '
          ~ known_at ~ '))' -%}
  {%- endif -%}
  {{ return({
      'kind': kind,
      'columns': names if columns_known else none,
      'unique_key': keys,
      'valid_from': valid_from or 'valid_from',
      'valid_to': valid_to or 'valid_to',
      'open_sql': open_sql,
      'end_sql': 'case when ' ~ open_sql ~ ' then null else ' ~ q ~ historize._quote(valid_to or 'valid_to') ~ ' end',
      'interval': interval,
      'step': step or ('interval 1 millisecond' if interval == 'closed' else 'interval 0 seconds'),
      'deleted_sql': deleted_when or defaults.deleted_when,
      'version_column': version_column or defaults.version_column,
      'history_columns': defaults.history_columns + (['recorded_at', 'superseded_at'] if bitemporal else [])
          if defaults.history_columns else none,
      'bitemporal': bitemporal,
      'belief_sql': belief_sql,
  }) }}
{% endmacro %}


{#- The lowercase column names and the properties of `relation` (while
    executing; while parsing, none). Fails, naming it, when it does not exist,
    except under `dbt compile` (and sqlfluff's dbt templater, which compiles):
    there a table a model of the project builds compiles before its first load,
    from that model's config (_history_table_planned_facts). -#}
{% macro _history_table_facts(relation, used_by) %}
  {%- if not execute -%}
    {{ return({'columns': [], 'properties': {}}) }}
  {%- endif -%}
  {%- if relation is string or relation is none -%}
    {{ exceptions.raise_compiler_error("historize: " ~ used_by ~ ": '" ~ relation ~ "' is not a relation; "
        ~ "pass ref('model') or source('source', 'table')") }}
  {%- endif -%}
  {#- Under --empty (or --sample) a ref renders as a subquery of no (or some) rows, which
      the queries read; the columns and properties are the table's own. -#}
  {%- set relation = relation.incorporate(limit=none, event_time_filter=none) -%}
  {#- Under dbt compile the table may not be built yet. dbt-spark in-process (method: session)
      logs pyspark's error and its stack when asked for a missing table's columns, and
      nothing when listing its schema, so on Spark it is looked up in the listing first. -#}
  {%- if flags.WHICH == 'compile' and target.type == 'spark'
        and adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
    {%- set names = [] -%}
  {%- else -%}
    {%- set names = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
  {%- endif -%}
  {%- set planned = historize._history_table_planned_facts(relation) if not names and flags.WHICH == 'compile' else none -%}
  {%- if planned -%}
    {{ return(planned) }}
  {%- elif not names -%}
    {{ exceptions.raise_compiler_error("historize: " ~ used_by ~ ": " ~ relation ~ " does not exist (or has no columns)") }}
  {%- endif -%}
  {%- set properties = {} -%}
  {%- for row in run_query('show tblproperties ' ~ relation).rows if row[0].startswith('historize.') -%}
    {%- do properties.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {{ return({'columns': names, 'properties': properties}) }}
{% endmacro %}


{#- What a model of the project that builds `relation` with one of historize's
    materializations will record in the table's properties (its kind, key and
    timeline), from its config; its columns are not known before its first load
    (none). None when no such model builds it. -#}
{% macro _history_table_planned_facts(relation) %}
  {%- for node in graph.nodes.values() if node.resource_type == 'model'
        and node.config.materialized in ['scd2_hist', 'scd_type6', 'fivetran_history']
        and (node.schema | lower) == (relation.schema | lower)
        and ((node.alias or node.name) | lower) == (relation.identifier | lower) -%}
    {#- each option as _read_option reads it: from the model's meta, else from config() -#}
    {%- set options = {} -%}
    {%- for name in ['unique_key', 'bitemporal'] -%}
      {%- set value = (node.config.meta or {}).get(name) -%}
      {%- do options.update({name: node.config.get(name) if value is none or value == '' else value}) -%}
    {%- endfor -%}
    {%- set properties = {'historize.kind': node.config.materialized,
                          'historize.unique_key': historize._as_name_list('unique_key', options.unique_key) | join(',')} -%}
    {%- if options.bitemporal -%}
      {%- do properties.update({'historize.bitemporal': 'true'}) -%}
    {%- endif -%}
    {{ return({'columns': none, 'properties': properties}) }}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}


{#- Fails, naming the macro, the argument and the table, when a required
    argument is missing: it must never reach Spark as broken SQL. (Checked
    when executing, when the table's name is known.) -#}
{% macro _assert_given(used_by, relation, arguments) %}
  {%- if not execute -%}
    {{ return(none) }}
  {%- endif -%}
  {%- if relation is none or relation == '' -%}
    {{ exceptions.raise_compiler_error("historize: " ~ used_by ~ ": the history table argument is missing") }}
  {%- endif -%}
  {%- for name, value in arguments.items() if value is none or value == '' or value == [] -%}
    {{ exceptions.raise_compiler_error("historize: " ~ used_by ~ " on " ~ relation ~ ": argument '" ~ name ~ "' is missing") }}
  {%- endfor -%}
{% endmacro %}


{#- The kind of a table that records none, recognised by its columns. -#}
{% macro _history_kind_by_columns(names) %}
  {%- if 'version_started_at' in names and 'version_ended_at' in names -%}
    {{ return('scd2_hist') }}
  {%- elif 'effective_from' in names and 'effective_to' in names and 'current_flag' in names -%}
    {{ return('scd_type6') }}
  {%- elif '_fivetran_start' in names and '_fivetran_end' in names -%}
    {{ return('fivetran_history') }}
  {%- endif -%}
  {{ return(none) }}
{% endmacro %}


{#- Every version of `relation` with what the invariant tests and the
    point-in-time macros need, computed once:
      _historize_valid_from, _historize_valid_to (NULL when open), _historize_is_open,
      _historize_next_from (start of the key's next version), _historize_prev_to,
      _historize_position (1, 2, ... by valid_from), _historize_is_latest,
      _historize_is_deleted, and with a version column _historize_prev_version.
    `since` (a timestamp as text) keeps only the versions open or ending at or
    after it: what loads since then wrote or closed. Of a bitemporal table, the
    versions of the belief conv.belief_sql selects. -#}
{% macro _history_versions_sql(relation, conv, since=none) %}
  {%- set keys = conv.unique_key -%}
  {%- set by_key = 'partition by ' ~ historize._column_list(keys, 'v') ~ ' order by v.' ~ historize._quote(conv.valid_from) -%}
    with ordered_versions as (
        select
            v.*,
            v.{{ historize._quote(conv.valid_from) }} as _historize_valid_from,
            {{ conv.end_sql }} as _historize_valid_to,
            coalesce({{ conv.open_sql }}, false) as _historize_is_open,
            lead(v.{{ historize._quote(conv.valid_from) }}) over ({{ by_key }}) as _historize_next_from,
            lag({{ conv.end_sql }}) over ({{ by_key }}) as _historize_prev_to,
            lag(v.{{ historize._quote(conv.valid_from) }}) over ({{ by_key }}) as _historize_prev_from,
            row_number() over ({{ by_key }}) as _historize_position,
            {%- if conv.version_column %}
            lag(v.{{ historize._quote(conv.version_column) }}) over ({{ by_key }}) as _historize_prev_version,
            {%- endif %}
            row_number() over ({{ by_key }} desc) = 1 as _historize_is_latest
        from {{ relation }} as v
        {%- if since %}
        {%- set window_sql = conv.open_sql ~ ' or v.' ~ historize._quote(conv.valid_to) ~ " >= timestamp'"
              ~ historize._timestamp_text("argument 'since'", since) ~ "'" %}
        where {{ conv.belief_sql ~ ' and (' ~ window_sql ~ ')' if conv.belief_sql else window_sql }}
        {%- elif conv.belief_sql %}
        where {{ conv.belief_sql }}
        {%- endif %}
    )

    select
        v.*,
        coalesce({{ conv.deleted_sql }}, false) as _historize_is_deleted
    from ordered_versions as v
{% endmacro %}
