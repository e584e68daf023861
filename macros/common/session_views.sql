{#- The session views of a load: the model's select staged, the change set
    cached when a plan query reads it, both dropped at the end of the load. -#}

{#- Stages the model's select as a session view; returns its columns. -#}
{% macro _stage_select(view, select_sql) %}
  {{ historize._drop_session_views([view]) }}
  {%- call statement('stage_' ~ view.identifier) -%}
    create or replace temporary view {{ view }} as
    {{ select_sql }}
  {%- endcall -%}
  {{ return(adapter.get_columns_in_relation(view)) }}
{% endmacro %}


{#- Caches `changes_sql` as the load's session view `relations.change_set`, on
    its first read (the plan query's), and notes it among the views the load
    cached. A load that is its MERGE alone caches none. -#}
{% macro _stage_change_set(relations, changes_sql) %}
  {%- set view = relations.change_set -%}
  {{ historize._drop_session_views([view]) }}
  {%- call statement('stage_' ~ view.identifier) -%}
    {{ adapter.dispatch('cache_query_sql', 'historize')(view, changes_sql) }}
  {%- endcall -%}
  {%- do relations.cached.append(view) -%}
{% endmacro %}

{% macro default__cache_query_sql(view, query_sql) %}
    cache lazy table {{ view }} as
    {{ query_sql }}
{% endmacro %}

{#- Databricks: a SQL warehouse has no CACHE TABLE; the session view is read
    again by each statement, at the version of the table its query names. -#}
{% macro databricks__cache_query_sql(view, query_sql) %}
    create or replace temporary view {{ view }} as
    {{ query_sql }}
{% endmacro %}


{#- Caches a staged view that several statements of a load read (an events
    batch, a Fivetran batch), when the adapter has a cache (cache_view_sql).
    The cache is filled by the first statement that reads the view, the
    load's check, so the batch is read once and every later statement reads
    the events the check read. -#}
{% macro _cache_staged(staged) %}
  {%- set cache_sql = adapter.dispatch('cache_view_sql', 'historize')(staged) -%}
  {%- if cache_sql -%}
    {%- call statement('cache_' ~ staged.identifier) -%}{{ cache_sql }}{%- endcall -%}
  {%- endif -%}
{% endmacro %}

{% macro default__cache_view_sql(view) %}
  {{ return('cache lazy table ' ~ view) }}
{% endmacro %}

{#- Databricks: a SQL warehouse has no CACHE TABLE; its disk cache keeps what
    the statements read. -#}
{% macro databricks__cache_view_sql(view) %}
  {{ return(none) }}
{% endmacro %}


{#- Drops session views and their cached data, left over or done with: at
    the end of a load, its `relations.cached + [relations.staged]`. (DROP
    VIEW uncaches without resolving the view, which may name a dropped table.) -#}
{% macro _drop_session_views(views) %}
  {%- for view in views -%}
    {%- call statement('drop_' ~ view.identifier) -%}
      drop view if exists {{ view }}
    {%- endcall -%}
  {%- endfor -%}
{% endmacro %}
