{#- The load run id: --vars '{load_run_id: ...}', else dbt's invocation id. -#}
{% macro load_run_id() %}
  {%- set given = var('load_run_id', none) -%}
  {%- set value = invocation_id if given is none else given | string | trim -%}
  {%- if value == '' -%}
    {{ exceptions.raise_compiler_error("historize: var 'load_run_id' is empty") }}
  {%- endif -%}
  {{ return(value) }}
{% endmacro %}
