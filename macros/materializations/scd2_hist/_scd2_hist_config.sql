{#- Reads and validates every scd2_hist option in one place. -#}
{% macro _scd2_hist_config() %}
  {%- set strategies = ['merge', 'ordered'] -%}
  {%- set strategy = historize._read_option('strategy', 'merge') -%}
  {{ historize._assert_one_of('strategy', strategy, strategies) }}
  {%- set extra_properties = historize._read_option('tblproperties', {}) -%}
  {%- if extra_properties is not mapping and execute -%}
    {{ exceptions.raise_compiler_error("historize: option 'tblproperties' is " ~ extra_properties ~ "; expected a mapping") }}
  {%- endif -%}
  {%- set properties = {
      'delta.columnMapping.mode': 'name',
      'delta.minReaderVersion': '2',
      'delta.minWriterVersion': '5',
  } -%}
  {%- do properties.update(extra_properties if extra_properties is mapping else {}) -%}
  {{ return({
      'model_name': model.name,
      'unique_key': historize._as_column_list('unique_key', historize._read_option('unique_key')),
      'strategy': strategy,
      'tblproperties': properties,
      'hist_key': (model.name ~ '_key') | lower,
      'row_hash': 'row_hash',
      'started_at': 'version_started_at',
      'ended_at': 'version_ended_at',
      'state': 'version_state',
      'load_run_id': 'load_run_id',
      'loaded_at': 'loaded_at',
  }) }}
{% endmacro %}


{#- The technical columns the materialization writes after the select's columns. -#}
{% macro _scd2_hist_technical_columns(cfg) %}
  {{ return([cfg.row_hash, cfg.started_at, cfg.ended_at, cfg.state, cfg.load_run_id, cfg.loaded_at]) }}
{% endmacro %}
