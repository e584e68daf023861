{#- How a history table writes its versions: validity columns, how "open" and
    "deleted" show, half-open or closed intervals, a version column. Detected
    from the columns of this project's three kinds of tables; every part can
    be given explicitly, which is how other tables (dbt snapshots, sources)
    are described.

    Returns a mapping with SQL fragments for a relation aliased `alias`:
      valid_from, valid_to          column names
      open_sql                      predicate: the version is open (valid to infinity)
      end_sql                       the version's end, NULL when open
      interval                      'half_open' ([from, to)) or 'closed' ([from, to])
      step                          for closed intervals: what separates consecutive versions
      deleted_sql                   predicate: the version ended because its key was deleted;
                                    it may use the _historize_* columns of _history_versions_sql
                                    (Fivetran's tables record a delete only as a gap after it)
      version_column                a 1, 2, 3 ... column, or none -#}
{% macro _history_conventions(relation, valid_from=none, valid_to=none, open_when=none, interval=none,
                              step=none, deleted_when=none, version_column=none, alias='v') %}
  {%- set names = [] -%}
  {%- if execute and (valid_from is none or valid_to is none) -%}
    {%- set names = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
  {%- endif -%}
  {%- set q = alias ~ '.' -%}
  {%- if 'version_started_at' in names and 'version_ended_at' in names -%}
    {%- set kind = {'valid_from': 'version_started_at', 'valid_to': 'version_ended_at',
        'open_when': q ~ 'version_ended_at is null', 'interval': 'half_open',
        'deleted_when': q ~ "version_state = 'deleted'", 'version_column': none} -%}
  {%- elif 'effective_from' in names and 'effective_to' in names and 'current_flag' in names -%}
    {%- set kind = {'valid_from': 'effective_from', 'valid_to': 'effective_to',
        'open_when': q ~ 'current_flag', 'interval': 'half_open',
        'deleted_when': q ~ "change_reason = 'deleted_in_source'",
        'version_column': 'version' if 'version' in names else none} -%}
  {%- elif '_fivetran_start' in names and '_fivetran_end' in names -%}
    {%- set kind = {'valid_from': '_fivetran_start', 'valid_to': '_fivetran_end',
        'open_when': q ~ '_fivetran_active', 'interval': 'closed',
        'deleted_when': 'not ' ~ q ~ '_historize_is_open and (' ~ q ~ '_historize_next_from is null or '
            ~ q ~ '_historize_next_from <> ' ~ q ~ '_historize_valid_to + interval 1 millisecond)',
        'version_column': none} -%}
  {%- else -%}
    {%- set kind = {'valid_from': valid_from, 'valid_to': valid_to, 'open_when': none,
        'interval': 'half_open', 'deleted_when': 'false', 'version_column': none} -%}
  {%- endif -%}
  {%- set valid_from = valid_from or kind.valid_from -%}
  {%- set valid_to = valid_to or kind.valid_to -%}
  {%- if execute and (valid_from is none or valid_to is none) -%}
    {{ exceptions.raise_compiler_error(
        "historize: " ~ relation ~ " is not a historize table (its columns: " ~ names | join(', ')
        ~ "); give valid_from and valid_to") }}
  {%- endif -%}
  {%- set interval = interval or kind.interval -%}
  {{ historize._assert_one_of('interval', interval, ['half_open', 'closed']) }}
  {%- set open_sql = open_when or kind.open_when or (q ~ adapter.quote(valid_to or 'valid_to') ~ ' is null') -%}
  {{ return({
      'valid_from': valid_from,
      'valid_to': valid_to,
      'open_sql': open_sql,
      'end_sql': 'case when ' ~ open_sql ~ ' then null else ' ~ q ~ adapter.quote(valid_to or 'valid_to') ~ ' end',
      'interval': interval,
      'step': step or ('interval 1 millisecond' if interval == 'closed' else 'interval 0 seconds'),
      'deleted_sql': deleted_when or kind.deleted_when,
      'version_column': version_column or kind.version_column,
  }) }}
{% endmacro %}


{#- Every version of `relation` with what the invariant tests and the
    point-in-time macros need, computed once:
      _historize_valid_from, _historize_valid_to (NULL when open), _historize_is_open,
      _historize_next_from (start of the key's next version), _historize_prev_to,
      _historize_position (1, 2, ... by valid_from), _historize_is_latest,
      _historize_is_deleted. -#}
{% macro _history_versions_sql(relation, unique_key, conv) %}
  {%- set keys = historize._as_column_list('unique_key', unique_key) -%}
  {%- set by_key = 'partition by ' ~ historize._column_list(keys, 'v') ~ ' order by v.' ~ adapter.quote(conv.valid_from) -%}
    with ordered_versions as (
        select
            v.*,
            v.{{ adapter.quote(conv.valid_from) }} as _historize_valid_from,
            {{ conv.end_sql }} as _historize_valid_to,
            coalesce({{ conv.open_sql }}, false) as _historize_is_open,
            lead(v.{{ adapter.quote(conv.valid_from) }}) over ({{ by_key }}) as _historize_next_from,
            lag({{ conv.end_sql }}) over ({{ by_key }}) as _historize_prev_to,
            lag(v.{{ adapter.quote(conv.valid_from) }}) over ({{ by_key }}) as _historize_prev_from,
            row_number() over ({{ by_key }}) as _historize_position,
            row_number() over ({{ by_key }} desc) = 1 as _historize_is_latest
        from {{ relation }} as v
    )

    select
        v.*,
        coalesce({{ conv.deleted_sql }}, false) as _historize_is_deleted
    from ordered_versions as v
{% endmacro %}
