{#- Adopting a dbt snapshot or an SCD2 table (option adopt_from): the first
    load of an scd2_hist model whose table does not exist yet reads the
    table, checks it (adoption.sql), and writes its versions as the history;
    the load then goes on as on any history table. See docs/switching.md. -#}

{#- What adopt_from names, checked against the model: a snapshot of the
    project (its columns from its config: snapshot_meta_column_names, the
    open versions' end dbt_valid_to_current, the deletion records of
    hard_deletes 'new_record'), or any SCD2 table, `schema.table`, whose
    columns adopt_columns names. Returns {'described', 'relation', 'columns'
    (the select's business columns as the table holds them: (name, type in
    the select, whether it is cast to it)), 'valid_from', 'valid_to',
    'open_end' (an SQL value of valid_to that marks an open version, or
    none), 'current_flag', 'deleted', 'version_id' (column names, or none),
    'set_aside' (the table of the rows adopt_repair sets aside)}. The same
    unique_key, and every column of the select in the table, of the same
    type or one it widens to. -#}
{% macro _scd2_hist_adoption(cfg, history, select_columns, business_columns) %}
  {%- set head = "historize: model " ~ cfg.model_name ~ ": adopt_from '" ~ cfg.adopt_from ~ "': " -%}
  {%- set snapshots = graph.nodes.values() | selectattr('resource_type', 'equalto', 'snapshot') | list -%}
  {%- set named = snapshots | selectattr('name', 'equalto', cfg.adopt_from) | list -%}
  {%- if named -%}
    {%- set node = named[0] -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- if relation is none -%}
      {{ exceptions.raise_compiler_error(head ~ "its table " ~ node.schema ~ "." ~ node.alias
          ~ " does not exist; run dbt snapshot first. Nothing was written") }}
    {%- endif -%}
    {%- set table_key = historize._as_name_list('unique_key', node.config.get('unique_key')) -%}
    {%- if table_key != cfg.unique_key -%}
      {{ exceptions.raise_compiler_error(head ~ "its unique_key is (" ~ table_key | join(', ')
          ~ "), the model's (" ~ cfg.unique_key | join(', ') ~ "). Nothing was written") }}
    {%- endif -%}
    {%- set meta = {'dbt_valid_from': 'dbt_valid_from', 'dbt_valid_to': 'dbt_valid_to', 'dbt_scd_id': 'dbt_scd_id',
                    'dbt_is_deleted': 'dbt_is_deleted'} -%}
    {%- for name, value in (node.config.get('snapshot_meta_column_names') or {}).items() if name in meta and value -%}
      {%- do meta.update({name: value | lower}) -%}
    {%- endfor -%}
    {%- set hard_deletes = node.config.get('hard_deletes') or ('invalidate' if node.config.get('invalidate_hard_deletes') else 'ignore') -%}
    {%- set adoption = {'described': 'snapshot ' ~ node.name ~ ' (' ~ relation ~ ')', 'valid_from': meta.dbt_valid_from,
                        'valid_to': meta.dbt_valid_to, 'open_end': node.config.get('dbt_valid_to_current'),
                        'current_flag': none, 'deleted': meta.dbt_is_deleted if hard_deletes == 'new_record' else none,
                        'version_id': meta.dbt_scd_id} -%}
  {%- elif cfg.adopt_from.split('.') | length == 2 -%}
    {%- set relation = historize._adopted_relation(cfg) -%}
    {%- if not (cfg.adopt_columns.get('valid_from') and cfg.adopt_columns.get('valid_to')) -%}
      {{ exceptions.raise_compiler_error(head ~ "a table that is not a snapshot of this project needs adopt_columns "
          ~ "with its valid_from and valid_to columns (and current_flag, deleted if it has them); adopt_columns is "
          ~ cfg.adopt_columns ~ ". Nothing was written") }}
    {%- endif -%}
    {%- set adoption = {'described': 'table ' ~ relation, 'open_end': none, 'version_id': none} -%}
    {%- for name in ['valid_from', 'valid_to', 'current_flag', 'deleted'] -%}
      {%- do adoption.update({name: cfg.adopt_columns.get(name) | lower if cfg.adopt_columns.get(name) else none}) -%}
    {%- endfor -%}
  {%- else -%}
    {{ exceptions.raise_compiler_error(head ~ "names no snapshot of this project (its snapshots: "
        ~ (snapshots | map(attribute='name') | sort | join(', ') or 'none') ~ ") and no table (schema.table). "
        ~ "Nothing was written") }}
  {%- endif -%}
  {%- set wanted = [] -%}
  {%- for column in select_columns if column.name | lower in business_columns or column.name | lower == cfg.hash_column -%}
    {%- do wanted.append((column.name | lower, column.data_type | lower)) -%}
  {%- endfor -%}
  {%- do adoption.update(historize._adopted_columns(cfg, history, relation, wanted,
        [adoption.valid_from, adoption.valid_to, adoption.current_flag, adoption.deleted, adoption.version_id])) -%}
  {{ return(adoption) }}
{% endmacro %}


{#- The adopted table's rows, each with its defect (_adoption_defects, or
    NULL), as the CTE `classified`, then `versions`: the rows without defect
    (with the repaired unchanged versions folded into the one they continue),
    deletion records (hard_deletes 'new_record') left out, each with its end
    and its version_state. A key's versions in time order: a closed one is
    `changed` when the next begins at its end, else `deleted` (the key was
    absent from then on, or a deletion record follows); an open one is
    `changed` when the one before ended at its start, else `new`. -#}
{% macro _scd2_hist_adoption_sql(cfg, adoption, attribute_columns) %}
  {%- set keys = cfg.unique_key -%}
  {%- set by_key = historize._column_list(keys) -%}
  {%- set in_time = '_historize_started_at, _historize_ended_at nulls last, _historize_version_id, ' ~ historize._quote(cfg.hash_column) -%}
  {%- set valid_to = historize._quote(adoption.valid_to, 'adopted') -%}
    with adopted_rows as (
        select
            {%- for column in adoption.columns %}
            {{ historize._adopted_value(column, 'adopted') }} as {{ historize._quote(column[0]) }},
            {%- endfor %}
            {%- if cfg.hash_column not in adoption.columns | map(attribute=0) | list %}
            {{ historize.row_hash(attribute_columns, 'adopted') }} as {{ historize._quote(cfg.hash_column) }},
            {%- endif %}
            cast({{ historize._quote(adoption.valid_from, 'adopted') }} as timestamp) as _historize_started_at,
            case
                {%- if adoption.current_flag %}
                when coalesce(lower(cast({{ historize._quote(adoption.current_flag, 'adopted') }} as string)) in ('true', '1', 'y', 'yes'), false)
                {%- else %}
                when {{ valid_to }} is null or {{ valid_to }} {{ '= (' ~ adoption.open_end ~ ')' if adoption.open_end else ">= timestamp'9999-01-01'" }}
                {%- endif %}
                    then cast(null as timestamp)
                else cast({{ valid_to }} as timestamp)
            end as _historize_ended_at,
            {%- if adoption.deleted %}
            coalesce(lower(cast({{ historize._quote(adoption.deleted, 'adopted') }} as string)) in ('true', '1', 'y', 'yes'), false) as _historize_deletion,
            {%- else %}
            false as _historize_deletion,
            {%- endif %}
            {%- if adoption.version_id %}
            cast({{ historize._quote(adoption.version_id, 'adopted') }} as string) as _historize_version_id,
            {%- else %}
            cast(null as string) as _historize_version_id,
            {%- endif %}
            struct(adopted.*) as _historize_adopted_row
        from {{ adoption.relation }} as adopted
    ),

    first_checks as (
        select
            *,
            case
                when _historize_deletion and ({{ historize._column_list(keys, suffix=' is null', separator=' or ') }})
                    then 'keyless_deletion_record'
                when {{ historize._column_list(keys, suffix=' is null', separator=' or ') }} then 'null_key'
                when _historize_started_at is null then 'missing_start'
                when _historize_ended_at is null and row_number() over (
                    partition by {{ by_key }}
                    order by _historize_ended_at is null desc, _historize_started_at desc, _historize_version_id desc,
                        {{ historize._quote(cfg.hash_column) }} desc) > 1 then 'two_open_versions'
                when _historize_started_at > {{ historize.load_timestamp_sql() }}
                    or _historize_ended_at > {{ historize.load_timestamp_sql() }} then 'after_load'
                when _historize_ended_at <= _historize_started_at then 'empty_interval'
            end as _historize_first_defect
        from adopted_rows
    ),

    {#- The rows without a defect so far, each against the one before it (they come
        first in each key's order). Every window of the adoption is over the key alone,
        so that Spark shuffles the table once. #}
    classified as (
        select
            *,
            coalesce(_historize_first_defect, case
                when lag(coalesce(_historize_ended_at, timestamp'9999-12-31 23:59:59')) over by_time > _historize_started_at
                    then 'overlapping_versions'
                when lag(_historize_ended_at) over by_time <=> _historize_started_at
                    and not lag(_historize_deletion) over by_time
                    and not _historize_deletion
                    and lag({{ historize._quote(cfg.hash_column) }}) over by_time <=> {{ historize._quote(cfg.hash_column) }}
                    then 'unchanged_version'
            end) as _historize_defect
        from first_checks
        window by_time as (partition by {{ by_key }} order by _historize_first_defect is not null, {{ in_time }})
    ),

    {#- The rows kept, each with the unchanged versions after it (`_historize_run`). #}
    kept as (
        select
            *,
            count_if(_historize_defect is null) over (
                partition by {{ by_key }} order by {{ in_time }} rows between unbounded preceding and current row) as _historize_run
        from classified
        where _historize_defect is null or _historize_defect = 'unchanged_version'
    ),

    spans as (
        select
            *,
            last_value(_historize_ended_at) over (
                partition by {{ by_key }}, _historize_run order by {{ in_time }}
                rows between unbounded preceding and unbounded following) as _historize_span_end
        from kept
    ),

    neighbours as (
        select
            *,
            lead(_historize_started_at) over by_time as _historize_next_start,
            lead(_historize_deletion) over by_time as _historize_next_deletion,
            lag(_historize_span_end) over by_time as _historize_previous_span_end,
            lag(_historize_deletion) over by_time as _historize_previous_deletion
        from spans
        where _historize_defect is null
        window by_time as (partition by {{ by_key }} order by {{ in_time }})
    ),

    versions as (
        select
            *,
            case
                when _historize_span_end is not null then
                    case when _historize_next_start = _historize_span_end and not _historize_next_deletion then 'changed' else 'deleted' end
                when _historize_previous_span_end = _historize_started_at and not _historize_previous_deletion then 'changed'
                else 'new'
            end as _historize_state
        from neighbours
        where not _historize_deletion
    )
{% endmacro %}


{#- The history table's rows: the versions of `rows_sql` (_scd2_hist_adoption_sql), in the table's columns. -#}
{% macro _scd2_hist_adopted_versions_sql(cfg, rows_sql, business_columns) %}
  {%- set identity = [] -%}
  {%- for name in cfg.unique_key -%}{%- do identity.append(historize._quote(name, 'versions')) -%}{%- endfor -%}
    {{ rows_sql }}

    select
        {{ historize.hash_key(identity + ['versions._historize_started_at']) }} as {{ historize._quote(cfg.version_key) }},
        {%- for name in business_columns + [cfg.hash_column] %}
        {{ historize._quote(name, 'versions') }},
        {%- endfor %}
        versions._historize_started_at as {{ historize._quote(cfg.valid_from) }},
        versions._historize_span_end as {{ historize._quote(cfg.valid_to) }},
        versions._historize_state as {{ historize._quote(cfg.state) }},
        {{ historize._string_literal(historize.load_run_id()) }} as {{ historize._quote(cfg.load_run_id) }},
        {{ historize._utc_literal(run_started_at) }} as {{ historize._quote(cfg.loaded_at) }}
    from versions
{% endmacro %}
