{#- The run ledger: `historize_runs`, one Delta table per schema, one row per
    run of a history model (scd2_hist, scd_type6, fivetran_history): what the
    run did, or why it failed, for orchestrators and audits. An on-run-end
    hook of the project that runs the models writes it:

        on-run-end: ["{{ historize.record_runs(results) }}"]

    It reads dbt's results after the models ran, so a run that wrote nothing
    (refused, or overtaken by another writer) has its row too. A hook is not
    a model: a killed invocation records nothing, and its rerun records the
    rerun. Its append is blind, so invocations recording at once never
    conflict.

    The table's Delta versions and row counts come from the table's own
    history: the commits made between the model's start and end (dbt's
    timing against the commits' times, in UTC; a cluster's clock must agree
    with the clock of the machine running dbt). -#}
{% macro record_runs(results) %}
  {{ return(adapter.dispatch('record_runs', 'historize')(results)) }}
{% endmacro %}


{% macro default__record_runs(results) %}
  {%- if not execute -%}
    {{ return('') }}
  {%- endif -%}
  {%- set runs = [] -%}
  {%- for result in results
        if result.node.resource_type == 'model'
        and result.node.config.materialized in ('scd2_hist', 'scd_type6', 'fivetran_history')
        and result.status in ('success', 'error') -%}
    {%- do runs.append(result) -%}
  {%- endfor -%}
  {%- if not runs -%}
    {{ return('') }}
  {%- endif -%}
  {%- set rows_by_schema = {} -%}
  {%- set zone = run_query('select current_timezone()').rows[0][0] -%}
  {%- for result in runs -%}
    {%- set key = (result.node.database, result.node.schema) -%}
    {%- do rows_by_schema.setdefault(key, []).append(historize._run_row(result, zone)) -%}
  {%- endfor -%}
  {%- for key, rows in rows_by_schema.items() -%}
    {%- set ledger = historize._run_ledger(key[0], key[1]) -%}
    {%- call statement('record_runs') -%}
      insert into {{ ledger }} (
          table_name, model, invocation_id, load_timestamp, load_run_id, started_at, ended_at, outcome, error,
          new_keys, changed_keys, deleted_keys, rows_inserted, rows_updated, rows_deleted, version_before, version_after
      )
      values
          {{ rows | join(',\n          ') }}
    {%- endcall -%}
  {%- endfor -%}
  {{ return('') }}
{% endmacro %}


{#- The run ledger of a schema, created when missing. -#}
{% macro _run_ledger(database, schema) %}
  {%- set ledger = api.Relation.create(database=database, schema=schema, identifier='historize_runs',
        type='table') -%}
  {%- call statement('create_historize_runs') -%}
    create table if not exists {{ ledger }} (
        table_name string,
        model string,
        invocation_id string,
        load_timestamp timestamp,
        load_run_id string,
        started_at timestamp,
        ended_at timestamp,
        outcome string,
        error string,
        new_keys bigint,
        changed_keys bigint,
        deleted_keys bigint,
        rows_inserted bigint,
        rows_updated bigint,
        rows_deleted bigint,
        version_before bigint,
        version_after bigint
    ) using delta
  {%- endcall -%}
  {{ return(ledger) }}
{% endmacro %}


{#- One result's row, as a SQL tuple. -#}
{% macro _run_row(result, zone) %}
  {%- set timing = {} -%}
  {%- for step in result.timing if step.name == 'execute' -%}
    {%- do timing.update({'started': step.started_at, 'ended': step.completed_at}) -%}
  {%- endfor -%}
  {%- set relation = adapter.get_relation(database=result.node.database, schema=result.node.schema,
        identifier=result.node.alias) -%}
  {%- set commits = historize._run_commits(relation, timing.get('started'), timing.get('ended'), zone) -%}
  {%- set outcome = historize._run_outcome(result) -%}
  {%- set counts = {'new': 'null', 'changed': 'null', 'deleted': 'null'} -%}
  {%- set reported = modules.re.match('^([0-9]+) new, ([0-9]+) changed, ([0-9]+) deleted',
        (result.adapter_response or {}).get('_message') or '') -%}
  {%- if result.status == 'success' and reported -%}
    {%- do counts.update({'new': reported.group(1), 'changed': reported.group(2), 'deleted': reported.group(3)}) -%}
  {%- endif -%}
  {%- set values = [
      historize._string_literal(result.node.alias | lower),
      historize._string_literal(result.node.name),
      historize._string_literal(invocation_id),
      historize.load_timestamp_sql(),
      historize._string_literal(historize.load_run_id()),
      historize._utc_literal(timing.get('started')),
      historize._utc_literal(timing.get('ended')),
      historize._string_literal(outcome),
      'null' if result.status == 'success' else historize._string_literal(result.message),
      counts.new, counts.changed, counts.deleted,
      commits.inserted, commits.updated, commits.deleted,
      commits.before, commits.after,
  ] -%}
  {{ return('(' ~ values | join(', ') ~ ')') }}
{% endmacro %}


{#- written or nothing to write (the model's own result code); a failed
    run: conflict when another writer overtook it (the guard's error, or
    Delta's conflict between two commits), refused when historize refused
    the load, error otherwise. -#}
{% macro _run_outcome(result) %}
  {%- if result.status == 'success' -%}
    {{ return((result.adapter_response or {}).get('code') or 'written') }}
  {%- endif -%}
  {%- set message = result.message or '' -%}
  {%- if 'was written by another run after version' in message
        or modules.re.search('Concurrent[A-Za-z]*Exception|DELTA_CONCURRENT_', message) -%}
    {{ return('conflict') }}
  {%- elif 'historize: ' in message -%}
    {{ return('refused') }}
  {%- endif -%}
  {{ return('error') }}
{% endmacro %}


{#- The table's versions before and after the run and the rows its commits
    inserted, updated and deleted (Delta's operation metrics), as SQL
    literals. -#}
{% macro _run_commits(relation, started, ended, zone) %}
  {%- set found = {'before': 'null', 'after': 'null', 'inserted': 0, 'updated': 0, 'deleted': 0} -%}
  {%- if relation is none or started is none or ended is none -%}
    {{ return(found) }}
  {%- endif -%}
  {%- set history = run_query('describe history ' ~ relation) -%}
  {%- set metrics = {
      'inserted': ['numTargetRowsInserted', 'numOutputRows'],
      'updated': ['numTargetRowsUpdated', 'numUpdatedRows'],
      'deleted': ['numTargetRowsDeleted', 'numDeletedRows'],
  } -%}
  {%- for commit in history.rows | sort(attribute='version') -%}
    {%- set at = historize._as_utc(commit['timestamp'], zone) -%}
    {%- if at < started -%}
      {%- do found.update({'before': commit['version'] | int, 'after': commit['version'] | int}) -%}
    {%- elif at <= ended -%}
      {%- do found.update({'after': commit['version'] | int}) -%}
      {%- for count, names in metrics.items() -%}
        {%- for name in names
              if name != 'numOutputRows' or commit['operation'] not in ('MERGE', 'UPDATE', 'DELETE') -%}
          {%- set metric = modules.re.search(name ~ '\\W+([0-9]+)', commit['operationMetrics'] | string) -%}
          {%- if metric -%}
            {%- do found.update({count: found[count] + metric.group(1) | int}) -%}
          {%- endif -%}
        {%- endfor -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}


{#- A commit's time as a naive UTC datetime, as dbt times its steps. The
    embedded Spark hands timestamps to Python in the process's own time zone;
    a Thrift server renders them in the session's (`zone`), as text or parsed
    by dbt. -#}
{% macro _as_utc(value, zone) %}
  {%- set at = value -%}
  {%- if at is string -%}
    {%- set text = at | trim -%}
    {%- set at = modules.datetime.datetime.strptime(text, '%Y-%m-%d %H:%M:%S.%f' if '.' in text else '%Y-%m-%d %H:%M:%S') -%}
  {%- endif -%}
  {%- if at.tzinfo is none and target.method == 'session' and value is not string -%}
    {%- set at = at.astimezone() -%}
  {%- elif at.tzinfo is none -%}
    {%- set at = modules.pytz.timezone(zone).localize(at) -%}
  {%- endif -%}
  {{ return(at.astimezone(modules.pytz.utc).replace(tzinfo=none)) }}
{% endmacro %}
