{#- The load timestamp of this invocation, as 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC).
    From --vars '{load_timestamp: ...}', else the run's start; the same for
    every model of one invocation. -#}
{% macro load_timestamp() %}
  {%- set given = var('load_timestamp', none) -%}
  {%- if given is none -%}
    {{ return(run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f')) }}
  {%- endif -%}
  {%- set text = given | string | trim -%}
  {%- if not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,6})?$', text) -%}
    {{ exceptions.raise_compiler_error(
        "historize: var 'load_timestamp' is '" ~ text ~ "'; expected 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC)") }}
  {%- endif -%}
  {%- set fmt = '%Y-%m-%d %H:%M:%S.%f' if '.' in text else '%Y-%m-%d %H:%M:%S' -%}
  {%- set parsed = modules.datetime.datetime.strptime(text, fmt) -%}
  {{ return(parsed.strftime('%Y-%m-%d %H:%M:%S.%f')) }}
{% endmacro %}


{#- The load timestamp as a SQL literal; the explicit offset makes it UTC
    whatever the session's time zone. -#}
{% macro load_timestamp_sql() %}
  {{- return("timestamp'" ~ historize.load_timestamp() ~ "+00:00'") -}}
{% endmacro %}


{#- The load run id: --vars '{load_run_id: ...}', else dbt's invocation id. -#}
{% macro load_run_id() %}
  {%- set given = var('load_run_id', none) -%}
  {%- set value = invocation_id if given is none else given | string | trim -%}
  {%- if value == '' -%}
    {{ exceptions.raise_compiler_error("historize: var 'load_run_id' is empty") }}
  {%- endif -%}
  {{ return(value) }}
{% endmacro %}


{% macro load_run_id_sql() %}
  {{- return("'" ~ historize.load_run_id() | replace("\\", "\\\\") | replace("'", "\\'") ~ "'") -}}
{% endmacro %}


{#- When rows were physically written: the invocation's start (UTC), the same
    for every statement of the run, as opposed to the logical load_timestamp. -#}
{% macro _loaded_at_sql() %}
  {{- return("timestamp'" ~ run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "+00:00'") -}}
{% endmacro %}
