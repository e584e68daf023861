{#- The load's run: its id and its timestamp, the two variables an orchestrator
    passes (--vars '{load_run_id: ..., load_timestamp: ...}'), else dbt's own. -#}

{#- The load run id: --vars '{load_run_id: ...}', else dbt's invocation id. -#}
{% macro load_run_id() %}
  {%- set given = var('load_run_id', none) -%}
  {%- set value = invocation_id if given is none else given | string | trim -%}
  {%- if value == '' -%}
    {{ exceptions.raise_compiler_error("historize: var 'load_run_id' is empty") }}
  {%- endif -%}
  {{ return(value) }}
{% endmacro %}


{#- The load timestamp of this invocation, as 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC).
    From --vars '{load_timestamp: ...}', else the run's start; the same for
    every model of one invocation. -#}
{% macro load_timestamp() %}
  {%- set given = var('load_timestamp', none) -%}
  {%- if given is none -%}
    {{ return(run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f')) }}
  {%- endif -%}
  {{ return(historize._timestamp_text("var 'load_timestamp'", given)) }}
{% endmacro %}


{#- The load timestamp as a SQL literal; the explicit offset makes it UTC
    whatever the session's time zone. -#}
{% macro load_timestamp_sql() %}
  {{- return("timestamp'" ~ historize.load_timestamp() ~ "+00:00'") -}}
{% endmacro %}


{#- The recorded time of this run, when a bitemporal table learns what it loads,
    as 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC): --vars '{recorded_at: ...}', else
    the run's start. -#}
{% macro recorded_at() %}
  {%- set given = var('recorded_at', none) -%}
  {%- if given is none -%}
    {{ return(run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f')) }}
  {%- endif -%}
  {{ return(historize._timestamp_text("var 'recorded_at'", given)) }}
{% endmacro %}


{#- The recorded time as a SQL literal, in UTC. -#}
{% macro recorded_at_sql() %}
  {{- return("timestamp'" ~ historize.recorded_at() ~ "+00:00'") -}}
{% endmacro %}


{#- A naive UTC datetime as a SQL timestamp literal (the explicit offset makes it
    UTC whatever the session's time zone), or null. -#}
{% macro _utc_literal(value) %}
  {%- if value is none -%}
    {{ return('null') }}
  {%- endif -%}
  {{ return("timestamp'" ~ value.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "+00:00'") }}
{% endmacro %}


{#- A timestamp given as text ('YYYY-MM-DD HH:MM:SS[.ffffff]', UTC), checked
    and normalised to microseconds; `what` names where it came from. -#}
{% macro _timestamp_text(what, given) %}
  {%- set text = given | string | trim -%}
  {%- if not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,6})?$', text) -%}
    {{ exceptions.raise_compiler_error(
        "historize: " ~ what ~ " is '" ~ text ~ "'; expected 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC)") }}
  {%- endif -%}
  {%- set fmt = '%Y-%m-%d %H:%M:%S.%f' if '.' in text else '%Y-%m-%d %H:%M:%S' -%}
  {{ return(modules.datetime.datetime.strptime(text, fmt).strftime('%Y-%m-%d %H:%M:%S.%f')) }}
{% endmacro %}
