{#- Steps every materialization takes: stage the select, log a full refresh,
    check a load's plan before writing. -#}

{#- Stages the model's select as a session view; returns its columns. -#}
{% macro _stage_select(view, select_sql) %}
  {{ historize._uncache_view(view) }}
  {%- call statement('stage_' ~ view.identifier) -%}
    create or replace temporary view {{ view }} as
    {{ select_sql }}
  {%- endcall -%}
  {{ return(adapter.get_columns_in_relation(view)) }}
{% endmacro %}


{% macro _log_full_refresh(model_name, what='a history table') %}
  {%- if should_full_refresh() -%}
    {{ log("historize: " ~ model_name ~ ": --full-refresh never rebuilds " ~ what ~ "; loading incrementally", info=true) }}
  {%- endif -%}
{% endmacro %}


{#- One row: the columns of `counted_sql`, and whether load_timestamp is older
    than `newest_expression`, the newest instant already in `target`. -#}
{% macro _plan_with_newest_instant(counted_sql, target, newest_expression) %}
    {#- Subqueries, not CTEs: Spark does not substitute a cached view read
        inside a CTE, and would compute the change set again. -#}
    select
        with_newest.*,
        cast(newest_timestamp as string) as newest_instant,
        coalesce(newest_timestamp > {{ historize.load_timestamp_sql() }}, false) as load_is_older
    from (
        select
            counted.*,
            (select {{ newest_expression }} from {{ target }}) as newest_timestamp
        from (
            {{ counted_sql }}
        ) as counted
    ) as with_newest
{% endmacro %}


{#- Fails a load whose plan goes back in time, or reruns a load_timestamp over
    other data (`conflicts` keys whose `what` began at that instant differ). -#}
{% macro _assert_plan_applicable(plan, model_name, target, what) %}
  {%- if plan['load_is_older'] -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ model_name ~ ": load_timestamp " ~ historize.load_timestamp()
        ~ " is older than " ~ plan['newest_instant'] ~ ", the newest time already in " ~ target
        ~ "; loads must come in time order. Nothing was written") }}
  {%- endif -%}
  {%- if plan['conflicts'] > 0 -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ model_name ~ ": load_timestamp " ~ historize.load_timestamp()
        ~ " was already loaded with other data: " ~ plan['conflicts'] ~ " key(s) whose " ~ what ~ " began at this "
        ~ "load_timestamp now differ, e.g. " ~ plan['conflict_examples']
        ~ "; a rerun must see the same snapshot, a new snapshot needs a new load_timestamp. Nothing was written") }}
  {%- endif -%}
{% endmacro %}
