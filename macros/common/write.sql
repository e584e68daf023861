{#- The end of a load: write or not, and say what was done. -#}

{#- Runs a load's statements in order, or none when the plan has nothing to
    write (no commit). Each statement is {'name', 'builder', 'args'}: its
    builder macro is called with `args` and `guard`, the predicate of the
    version the run read (`_unchanged_since`). After each write the version is
    read again, so the next statement guards against writers that came in
    between. The last statement is dbt's 'main'. -#}
{% macro _write_or_noop(cfg, writes, statements, read) %}
  {%- if writes == 0 -%}
    {#- dbt requires a 'main' result; _report_load replaces it -#}
    {%- call noop_statement('main', 'nothing to write', 'nothing to write', 0) -%}{%- endcall -%}
  {%- else -%}
    {%- set current = {'read': read} -%}
    {%- if cfg.partition_by -%}
      {{ historize._set_write_per_task(true) }}
    {%- endif -%}
    {%- for step in statements -%}
      {%- call statement('main' if loop.last else step.name) -%}
        {{ step.builder(*step.args, guard=historize._unchanged_since(current.read, cfg)) }}
      {%- endcall -%}
      {%- if not loop.last -%}
        {%- do current.update({'read': historize._read_version(read.relation, read.scope)}) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if cfg.partition_by -%}
      {{ historize._set_write_per_task(false) }}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}


{#- On a partitioned table Delta's MERGE by default shuffles its output by the
    partition columns before writing, so one task writes all the open versions
    (one partition). A load writes from every task instead, for its MERGE
    only: the session's own setting is restored after it. -#}
{% macro _set_write_per_task(enabled) %}
  {%- call statement('write_per_task' if enabled else 'write_as_configured') -%}
    {%- if enabled %}
    set spark.databricks.delta.merge.repartitionBeforeWrite.enabled = false
    {%- else %}
    reset spark.databricks.delta.merge.repartitionBeforeWrite.enabled
    {%- endif %}
  {%- endcall -%}
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
