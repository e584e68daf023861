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
    cache lazy table {{ view }} as
    {{ changes_sql }}
  {%- endcall -%}
  {%- do relations.cached.append(view) -%}
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
