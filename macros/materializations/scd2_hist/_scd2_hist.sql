{#- Reads and validates every scd2_hist option in one place, and names the
    table's technical columns once. -#}
{% macro _scd2_hist_config() %}
  {%- set cfg = historize._history_config('scd2_hist', {
      'delta.columnMapping.mode': 'name',
      'delta.enableRowTracking': 'true',
  }) -%}
  {%- set strategy = historize._read_option('strategy', 'merge') -%}
  {{ historize._assert_one_of('strategy', strategy, ['merge', 'ordered']) }}
  {#- refuse: a load older than the table's newest is refused. reconcile: it is
      applied where it belongs in time (_scd2_hist_reconcile.sql), which needs
      the record of every load (load_ledger.sql) and the one-MERGE strategy. -#}
  {%- set out_of_order = historize._read_option('out_of_order', 'refuse') -%}
  {{ historize._assert_one_of('out_of_order', out_of_order, ['refuse', 'reconcile']) }}
  {%- if out_of_order == 'reconcile' and strategy != 'merge' and execute -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": out_of_order 'reconcile' needs "
        ~ "strategy 'merge' (a late load rewrites versions after it in one MERGE); strategy is '" ~ strategy ~ "'") }}
  {%- endif -%}
  {%- do cfg.update({
      'strategy': strategy,
      'out_of_order': out_of_order,
      'valid_from': 'version_started_at',
      'valid_to': 'version_ended_at',
      'state': 'version_state',
      'load_run_id': 'load_run_id',
      'loaded_at': 'loaded_at',
      'hash_column': 'row_hash',
  }) -%}
  {#- Open versions apart from closed ones: a load reads and rewrites only the
      open partition (version_ended_at NULL) and adds the partition of its own
      load_timestamp, so its cost follows the open versions, not the history.
      The model's partition_by, if any, partitions further. -#}
  {%- set model_partitions = config.get('partition_by') or [] -%}
  {%- do cfg.update({
      'partition_by': [cfg.valid_to] + historize._as_column_list('partition_by', model_partitions, required=false),
      'guard_scope': 'guarded.' ~ historize._quote(cfg.valid_to) ~ ' is null',
      'guard_newest': 'guarded.' ~ historize._quote(cfg.valid_from),
      'rerun_scope': 'guarded.' ~ historize._quote(cfg.valid_from) ~ ' = ' ~ historize.load_timestamp_sql(),
  }) -%}
  {#- Written after the select's columns, in this order. -#}
  {%- do cfg.update({'technical_columns': [cfg.hash_column, cfg.valid_from, cfg.valid_to, cfg.state, cfg.load_run_id, cfg.loaded_at]}) -%}
  {{ return(cfg) }}
{% endmacro %}


{#- The select's columns as scd2_hist uses them, checked: `business` (all but
    row_hash, in select order), `attributes` (business less the key, as
    Column objects: they make the row_hash), `has_row_hash` (the select
    brings its own). -#}
{% macro _scd2_hist_columns(cfg, select_columns) %}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {{ historize._assert_columns_present(cfg.unique_key, select_names, 'unique_key', cfg.model_name) }}
  {%- set reserved = [cfg.version_key] + cfg.technical_columns | reject('equalto', cfg.hash_column) | list -%}
  {%- set clashes = select_names | select('in', reserved) | list -%}
  {%- if clashes -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ cfg.model_name ~ ": the select has column(s) " ~ clashes | join(', ')
        ~ ", which scd2_hist writes itself; rename them in the select") }}
  {%- endif -%}
  {%- set business = historize._names_except(select_columns, [cfg.hash_column]) -%}
  {{ return({
      'business': business,
      'attributes': historize._columns_named(select_columns, business | reject('in', cfg.unique_key) | list),
      'has_row_hash': cfg.hash_column in select_names,
  }) }}
{% endmacro %}
