{#- The core of the invariant tests: the versions of `model` that break
    `invariant`, with the key, the version's interval and what is wrong.
    `since` (a load_timestamp) checks only the versions a load at or after
    that instant could have written or closed: those open, or ending at or
    after it. Each pair of versions in that window is checked as over the
    whole history; a version's number is checked against the one before it in
    the window. Of a bitemporal table, the versions of the current belief, or
    of the belief at `known_at` (a SQL expression). -#}
{% macro _temporal_invariant(invariant, model, unique_key, valid_from, valid_to, open_when, interval,
                            step, deleted_when, version_column, since=none, known_at=none) %}
  {%- set conv = historize._history_conventions(model, invariant, unique_key=unique_key, valid_from=valid_from,
        valid_to=valid_to, open_when=open_when, interval=interval, step=step, deleted_when=deleted_when,
        version_column=version_column, known_at=known_at) -%}
  {%- set keys = conv.unique_key -%}
  {%- set key_list = historize._column_list(keys) -%}
  {%- set key_targets = historize._column_list(keys, lines=true) -%}
  {%- set touching = '_historize_valid_to + ' ~ conv.step -%}
    with versions as (
        {{ historize._history_versions_sql(model, conv, since) }}
    ),

    violations as (
    {%- if invariant == 'one_open_version' %}
        select
            {{ key_targets }},
            count(*) as open_versions,
            'more than one open version' as violation
        from versions
        where _historize_is_open
        group by {{ key_list }}
        having count(*) > 1
    {%- elif invariant == 'no_overlapping_versions' %}
        select
            {{ key_targets }},
            _historize_valid_from as valid_from,
            _historize_valid_to as valid_to,
            _historize_next_from as next_valid_from,
            'overlaps the next version' as violation
        from versions
        where _historize_next_from is not null
            and (_historize_valid_to is null
                or _historize_next_from {{ '<' if conv.interval == 'half_open' else '<=' }} _historize_valid_to)
    {%- elif invariant == 'no_gaps' %}
        select
            {{ key_targets }},
            _historize_valid_from as valid_from,
            _historize_valid_to as valid_to,
            _historize_next_from as next_valid_from,
            'does not touch the next version' as violation
        from versions
        where _historize_next_from is not null
            and _historize_valid_to is not null
            and not _historize_is_deleted
            and _historize_next_from > {{ touching }}
    {%- elif invariant == 'open_version_unbounded' %}
        select
            {{ key_targets }},
            _historize_valid_from as valid_from,
            _historize_valid_to as valid_to,
            'latest version is closed but the key was not deleted' as violation
        from versions
        where _historize_is_latest and not _historize_is_open and not _historize_is_deleted
    {%- elif invariant == 'sequential_versions' %}
        {%- if conv.version_column is none and execute -%}
          {{ exceptions.raise_compiler_error("historize: sequential_versions on " ~ model ~ " needs version_column") }}
        {%- endif %}
        select
            {{ key_targets }},
            _historize_valid_from as valid_from,
            {{ historize._quote(conv.version_column or 'version') }} as version,
            _historize_position as expected_version,
            'version out of sequence' as violation
        from versions
        {%- if since %}
        where _historize_prev_version is not null
            and {{ historize._quote(conv.version_column or 'version') }} is distinct from _historize_prev_version + 1
        {%- else %}
        where {{ historize._quote(conv.version_column or 'version') }} is distinct from _historize_position
        {%- endif %}
    {%- endif %}
    )

    select * from violations
{% endmacro %}
