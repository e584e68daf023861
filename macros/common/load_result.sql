{#- A load's writes and what it did: Delta's write from every task, the
    counts of its MERGE, and its report. -#}

{#- On a partitioned table Delta's MERGE by default shuffles its output by the
    partition columns before writing, so one task writes all the open versions
    (one partition). A load of a partitioned table (cfg.partition_by) writes
    from every task instead, for its writes only: `enabled` false restores the
    session's own setting after them. The statement is the adapter's
    (write_per_task_sql): none where the platform spreads the write itself. -#}
{% macro _write_per_task(cfg, enabled) %}
  {%- set setting_sql = adapter.dispatch('write_per_task_sql', 'historize')(enabled) if cfg.partition_by else none -%}
  {%- if setting_sql -%}
    {%- call statement('write_per_task' if enabled else 'write_as_configured') -%}
      {{ setting_sql }}
    {%- endcall -%}
  {%- endif -%}
{% endmacro %}

{% macro default__write_per_task_sql(enabled) %}
  {{ return('set spark.databricks.delta.merge.repartitionBeforeWrite.enabled = false' if enabled
            else 'reset spark.databricks.delta.merge.repartitionBeforeWrite.enabled') }}
{% endmacro %}

{#- Databricks: a SQL warehouse refuses SET of Delta's settings, and its
    optimized writes already spread a MERGE's output over the partitions. -#}
{% macro databricks__write_per_task_sql(enabled) %}
  {{ return(none) }}
{% endmacro %}


{#- What a load's one MERGE wrote, from its statement's `result` (dbt's
    load_result): Delta's counts of rows {'affected', 'updated', 'deleted',
    'inserted'}. -#}
{% macro _merge_result(result) %}
  {%- set row = result.table.rows[0] -%}
  {{ return({'affected': row['num_affected_rows'] | int, 'updated': row['num_updated_rows'] | int,
             'deleted': row['num_deleted_rows'] | int, 'inserted': row['num_inserted_rows'] | int}) }}
{% endmacro %}


{#- What a load whose one MERGE writes versions did, counted in versions as
    Delta counts that MERGE's rows: inserted (new), updated (changed: closed,
    or rewritten in place) and deleted. -#}
{% macro _merge_versions_load(result) %}
  {%- set merged = historize._merge_result(result) -%}
  {{ return({'new': merged.inserted, 'changed': merged.updated, 'deleted': merged.deleted,
             'written': merged.affected, 'detail': 'versions'}) }}
{% endmacro %}


{#- What a load did, in the same words for every materialization: one log
    line, and dbt's result of the model, which dbt prints in its summary and
    writes to run_results.json (`adapter_response`): the same words as its
    message, `code` 'written' or 'nothing to write', and `rows_affected` the
    number of keys (versions, for fivetran_history) the load wrote. A load's
    result has one shape in every materialization, `load`: {'new', 'changed',
    'deleted'} (counts by action), 'written' (the keys or versions written)
    and 'detail' (said in parentheses). -#}
{% macro _report_load(cfg, load) %}
  {%- set message = load.new ~ " new, " ~ load.changed ~ " changed, " ~ load.deleted ~ " deleted"
      ~ (" (" ~ load.detail ~ ")" if load.detail else "") -%}
  {{ log("historize: " ~ cfg.model_name ~ ": " ~ message, info=true) }}
  {%- do store_raw_result('main', message=message, code='written' if load.written > 0 else 'nothing to write',
        rows_affected=load.written | int) -%}
{% endmacro %}


{#- Why this run leaves the history table as it is (none: it loads). dbt reads
    the select in part under --empty (every ref and source as no rows) and under
    --sample (each ref and source that has an event_time within the sample's
    window, as dbt decides which to sample). To a history model that is a
    snapshot without the keys left out (their versions would close) or a batch
    without the events left out, so the run writes nothing to a table that
    exists, nor to one its first load would fill from adopt_from (whose versions
    the partial select would close). A table that does not exist otherwise gets
    its first load from the partial select: empty under --empty, as dbt's own
    materializations create theirs, and the sample under --sample. Returns the
    flag and the log line. -#}
{% macro _left_as_is(cfg, relations) %}
  {%- if relations.found.relation is none and not cfg.get('adopt_from') -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set sampled = [] -%}
  {%- if invocation_args_dict.get('sample') is not none -%}
    {%- for node_id in model.depends_on.nodes -%}
      {%- set node = graph.nodes.get(node_id) or graph.sources.get(node_id) -%}
      {%- if node and (node.config or {}).get('event_time') -%}
        {%- do sampled.append(node.source_name ~ '.' ~ node.name if node.resource_type == 'source' else node.name) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if flags.EMPTY -%}
    {%- set flag, partial = '--empty', 'reads the select as no rows' -%}
  {%- elif sampled -%}
    {%- set flag, partial = '--sample', 'reads ' ~ sampled | join(', ') ~ ' within its sample window' -%}
  {%- else -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set table = relations.found.relation ~ " exists" if relations.found.relation is not none
        else relations.history ~ " is created by its first load, which adopts " ~ cfg.adopt_from -%}
  {{ return({'flag': flag, 'message': "historize: " ~ cfg.model_name ~ ": dbt " ~ flag ~ " " ~ partial ~ "; "
             ~ table ~ ", so nothing was written"}) }}
{% endmacro %}


{#- Says that the run left the table as it is (`left_as_is`, from _left_as_is),
    in the log and as the model's result. -#}
{% macro _report_left_as_is(left_as_is) %}
  {{ log(left_as_is.message, info=true) }}
  {%- do store_raw_result('main', message='nothing written (' ~ left_as_is.flag ~ ')', code='nothing to write',
        rows_affected=0) -%}
{% endmacro %}
