{#- One materialization option, from config() or else from the model's meta
    (dbt 1.10+ prefers custom keys under meta). The validators below raise
    only when executing: while parsing, config.get() answers ''. -#}
{% macro _read_option(name, default=none) %}
  {%- set value = config.get(name) -%}
  {%- if value is none -%}
    {%- set value = (config.get('meta') or {}).get(name) -%}
  {%- endif -%}
  {{ return(default if value is none else value) }}
{% endmacro %}


{#- A column name or a list of them, as a list of lowercase names. -#}
{% macro _as_column_list(option_name, value, required=true) %}
  {%- if value is none or value == [] or value == '' -%}
    {%- if required and execute -%}
      {{ exceptions.raise_compiler_error(
          "historize: option '" ~ option_name ~ "' is required: a column name or a list of column names") }}
    {%- endif -%}
    {{ return([]) }}
  {%- endif -%}
  {%- set names = [value] if value is string else value -%}
  {%- if (names is mapping or names is not iterable) and execute -%}
    {{ exceptions.raise_compiler_error(
        "historize: option '" ~ option_name ~ "' is " ~ value ~ "; expected a column name or a list of column names") }}
  {%- endif -%}
  {%- set result = [] -%}
  {%- for name in names -%}
    {%- if (name is not string or name | trim == '') and execute -%}
      {{ exceptions.raise_compiler_error(
          "historize: option '" ~ option_name ~ "' holds " ~ name ~ "; every entry must be a column name") }}
    {%- endif -%}
    {%- do result.append(name | trim | lower) -%}
  {%- endfor -%}
  {{ return(result) }}
{% endmacro %}


{% macro _assert_one_of(option_name, value, allowed) %}
  {%- if value not in allowed and execute -%}
    {{ exceptions.raise_compiler_error(
        "historize: option '" ~ option_name ~ "' is '" ~ value ~ "'; allowed: " ~ allowed | join(', ')) }}
  {%- endif -%}
{% endmacro %}
