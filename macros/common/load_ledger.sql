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

{% macro _load_ledger_columns() %}
  {{ return([
      ('table_name', 'string'),
      ('model', 'string'),
      ('load_timestamp', 'timestamp'),
      ('load_run_id', 'string'),
      ('outcome', 'string'),
      ('new_keys', 'bigint'),
      ('changed_keys', 'bigint'),
      ('deleted_keys', 'bigint'),
      ('recorded_at', 'timestamp'),
  ]) }}
{% endmacro %}


{#- The ledger of `target`'s schema, created when missing. -#}
{% macro _load_ledger(history) %}
  {%- set ledger = api.Relation.create(database=history.database, schema=history.schema,
        identifier='historize_loads', type='table') -%}
  {%- if adapter.get_relation(database=history.database, schema=history.schema, identifier='historize_loads') is none -%}
    {{ historize._create_ledger(ledger, historize._load_ledger_columns()) }}
    {%- do adapter.cache_added(ledger) -%}
  {%- endif -%}
  {{ return(ledger) }}
{% endmacro %}


{#- Creates a ledger (this one, or the run ledger) with its (name, type)
    columns, unless it exists. -#}
{% macro _create_ledger(ledger, columns) %}
  {%- set definitions = [] -%}
  {%- for name, data_type in columns -%}
    {%- do definitions.append(name ~ ' ' ~ data_type) -%}
  {%- endfor -%}
  {%- call statement('create_' ~ ledger.identifier) -%}
    create table if not exists {{ ledger }} (
        {{ definitions | join(',\n        ') }}
    ) using delta
  {%- endcall -%}
{% endmacro %}


{#- Appends this load's row: `outcome` 'written' or 'nothing to write', the
    counts by action. -#}
{% macro _record_load(ledger, cfg, history, outcome, counts) %}
  {%- call statement('record_load') -%}
    insert into {{ ledger }} (
        {{ historize._load_ledger_columns() | map('first') | join(', ') }}
    )
    values (
        {{ historize._string_literal(history.identifier | lower) }},
        {{ historize._string_literal(cfg.model_name) }},
        {{ historize.load_timestamp_sql() }},
        {{ historize.load_run_id_sql() }},
        {{ historize._string_literal(outcome) }},
        {{ counts.get('new', 0) | int }},
        {{ counts.get('changed', 0) | int }},
        {{ counts.get('deleted', 0) | int }},
        {{ historize._utc_literal(run_started_at) }}
    )
  {%- endcall -%}
{% endmacro %}


{#- Where this load's load_timestamp lies among the loads applied to
    `target`: the ledger's (under the table's name or a former one) and the
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

    runs as (
        select
            loads.load_at,
            min_by(loads.load_run_id, struct(loads.source_rank, loads.recorded_at)) as load_run_id
        from loads
        where loads.load_run_id is not null
        group by loads.load_at
    ),

    summary as (
        select
            max(loads.load_at) as newest_at,
            coalesce(max(loads.load_at = {{ at }}), false) as known,
            min(case when loads.load_at > {{ at }} then loads.load_at end) as next_at
        from loads
    )

    select
        {{ historize._utc_text('summary.newest_at') }} as newest,
        summary.known,
        known_run.load_run_id as known_run_id,
        {{ historize._utc_text('summary.next_at') }} as next,
        next_run.load_run_id as next_run_id
    from summary
    left join runs as known_run
        on known_run.load_at = {{ at }}
    left join runs as next_run
        on summary.next_at = next_run.load_at
  {%- endset -%}
  {%- set row = run_query(query).rows[0] -%}
  {{ return({'newest': row['newest'], 'known': row['known'], 'known_run_id': row['known_run_id'],
             'next': row['next'], 'next_run_id': row['next_run_id']}) }}
{% endmacro %}


{#- A timestamp as 'YYYY-MM-DD HH:MM:SS.ffffff' in UTC, whatever the session's
    time zone: the form load_timestamp takes. -#}
{% macro _utc_text(expression) %}
  {{- return("date_format(to_utc_timestamp(" ~ expression ~ ", current_timezone()), 'yyyy-MM-dd HH:mm:ss.SSSSSS')") -}}
{% endmacro %}


{#- A UTC text of _load_timeline as a SQL timestamp. -#}
{% macro _timestamp_sql(text) %}
  {{- return("timestamp'" ~ text ~ "+00:00'") -}}
{% endmacro %}
