{#- A load's writes: Delta's write from every task, and what the load did. -#}

{#- On a partitioned table Delta's MERGE by default shuffles its output by the
    partition columns before writing, so one task writes all the open versions
    (one partition). A load of a partitioned table (cfg.partition_by) writes
    from every task instead, for its writes only: `enabled` false restores the
    session's own setting after them. -#}
{% macro _write_per_task(cfg, enabled) %}
  {%- if cfg.partition_by -%}
    {%- call statement('write_per_task' if enabled else 'write_as_configured') -%}
      {%- if enabled %}
      set spark.databricks.delta.merge.repartitionBeforeWrite.enabled = false
      {%- else %}
      reset spark.databricks.delta.merge.repartitionBeforeWrite.enabled
      {%- endif %}
    {%- endcall -%}
  {%- endif -%}
{% endmacro %}


{#- What a load did, in the same words for every materialization: one log
    line, and dbt's result of the model, which dbt prints in its summary and
    writes to run_results.json (`adapter_response`): the same words as its
    message, `code` 'written' or 'nothing to write', and `rows_affected` the
    number of keys (versions, for fivetran_history) the load wrote. -#}
{% macro _report_load(cfg, counts, written, detail='') %}
  {%- set message = counts.get('new', 0) ~ " new, " ~ counts.get('changed', 0) ~ " changed, "
      ~ counts.get('deleted', 0) ~ " deleted" ~ (" (" ~ detail ~ ")" if detail else "") -%}
  {{ log("historize: " ~ cfg.model_name ~ ": " ~ message, info=true) }}
  {%- do store_raw_result('main', message=message, code='written' if written > 0 else 'nothing to write',
        rows_affected=written | int) -%}
{% endmacro %}
