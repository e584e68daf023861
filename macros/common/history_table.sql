{#- The history table itself: finding it (under its name or a former one),
    creating it with its properties, reading its state, keeping its properties
    in line with the model. -#}

{#- The relations of a load: `target` (the model's table), `existing` (it, if
    it exists), the session views `source` (the staged select) and `changes`
    (the change set, when the load stages it: `staged` lists it then), and
    `found` (_find_history_table, with `former_suffix`). -#}
{% macro _history_relations(cfg, former_suffix=none) %}
  {%- set target = this.incorporate(type='table') -%}
  {%- set existing = load_cached_relation(this) -%}
  {{ return({
      'target': target,
      'existing': existing,
      'source': make_temp_relation(this, '__historize_source').incorporate(type='view'),
      'changes': make_temp_relation(this, '__historize_changes').incorporate(type='view'),
      'staged': [],
      'found': historize._find_history_table(cfg, target, existing, former_suffix),
  }) }}
{% endmacro %}


{#- The relation holding the model's history: the existing table, else the
    one table named by the model's former_names (taken over by a rename before
    anything is written), else none. With `suffix`, only a name ending in it
    may be taken over. Returns {'relation': ..., 'former': relation or none}. -#}
{% macro _find_history_table(cfg, history, existing, suffix=none) %}
  {{ historize._assert_delta_table(existing, cfg.model_name) }}
  {%- if existing is not none -%}
    {{ return({'relation': existing, 'former': none}) }}
  {%- endif -%}
  {%- set found = [] -%}
  {%- for former in cfg.former_names -%}
    {%- set relation = adapter.get_relation(database=history.database, schema=history.schema, identifier=former) -%}
    {%- if relation is not none -%}{%- do found.append(relation) -%}{%- endif -%}
  {%- endfor -%}
  {%- if found | length > 1 -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": several of its former names exist as tables: "
        ~ found | join(', ') ~ "; keep one. Nothing was written") }}
  {%- endif -%}
  {%- if found and suffix and not (found[0].identifier | lower).endswith(suffix) -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": its former name " ~ found[0]
        ~ " does not end in " ~ suffix ~ "; a history table is only taken over from another history table. Nothing was written") }}
  {%- endif -%}
  {%- if found -%}
    {{ historize._assert_delta_table(found[0], cfg.model_name) }}
  {%- endif -%}
  {{ return({'relation': found[0] if found else none, 'former': found[0] if found else none}) }}
{% endmacro %}


{% macro _rename_table(former, history, model_name) %}
  {%- call statement('rename_table_' ~ former.identifier) -%}
    alter table {{ former }} rename to {{ history }}
  {%- endcall -%}
  {%- do adapter.cache_renamed(former, history) -%}
  {{ log("historize: " ~ model_name ~ ": renamed table " ~ former ~ " to " ~ history, info=true) }}
{% endmacro %}


{#- The properties a history table carries: the materialization's defaults and
    the model's tblproperties, and what readers of the table need to know
    (its kind, key and interval columns: the point-in-time macros and the
    invariant tests read them). -#}
{% macro _history_properties(cfg) %}
  {%- set properties = {} -%}
  {%- do properties.update(cfg.tblproperties) -%}
  {%- do properties.update({
      'historize.kind': cfg.kind,
      'historize.unique_key': cfg.unique_key | join(','),
      'historize.valid_from': cfg.valid_from,
      'historize.valid_to': cfg.valid_to,
  }) -%}
  {#- The layout the materialization gave the table, so that a load knows it
      from the properties it reads anyway. -#}
  {%- if cfg.partition_by -%}
    {%- do properties.update({'historize.partitioned_by': cfg.partition_by | join(',')}) -%}
  {%- endif -%}
  {{ return(properties) }}
{% endmacro %}


{% macro _properties_clause(properties) %}
    tblproperties (
    {%- for name, value in properties.items() %}
        {{ historize._string_literal(name) }} = {{ historize._string_literal(value) }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
{% endmacro %}


{#- Creates a history (or audit) table: from `columns` ((name, type) pairs) or
    as `select_sql`. `for_model` adds the model's partitioning, location and
    comment (not wanted on an audit table); `partition_by` (a list of columns)
    is the materialization's own layout, in place of the model's. `name` is
    the statement's: 'main' when creating is the load's write. -#}
{% macro _create_history_table(relation, properties, columns=none, select_sql=none, for_model=true, name=none,
                               partition_by=none) %}
  {%- call statement(name or 'create_' ~ relation.identifier) -%}
    create table {{ relation }}
    {%- if columns %} (
        {%- for name, type in columns %}
        {{ historize._quote(name) }} {{ type }}{{ ',' if not loop.last }}
        {%- endfor %}
    )
    {%- endif %}
    using delta
    {%- if partition_by %}
    partitioned by ({{ historize._column_list(partition_by) }})
    {%- elif for_model %}
    {{ partition_cols(label="partitioned by") }}
    {%- endif %}
    {%- if for_model %}
    {{ location_clause() }}
    {{ comment_clause() }}
    {%- endif %}
    {{ historize._properties_clause(properties) }}
    {%- if select_sql %}
    as
    {{ select_sql }}
    {%- endif %}
  {%- endcall -%}
  {%- do adapter.cache_added(relation) -%}
{% endmacro %}


{#- What a load needs to know of an existing table: its columns (in order,
    with types) and its properties. -#}
{% macro _read_table_state(relation) %}
  {%- set columns = adapter.get_columns_in_relation(relation) -%}
  {%- set properties = {} -%}
  {%- for row in run_query('show tblproperties ' ~ relation).rows -%}
    {%- do properties.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {{ return({'columns': columns, 'properties': properties}) }}
{% endmacro %}


{#- The properties the table lacks or holds with another value. The protocol
    versions are only set at creation: Delta raises them itself as features
    need, and never lowers them. -#}
{% macro _missing_properties(wanted, state) %}
  {%- set missing = {} -%}
  {%- for name, value in wanted.items() if name not in ['delta.minReaderVersion', 'delta.minWriterVersion'] -%}
    {%- if state.properties.get(name) | string != value | string -%}
      {%- do missing.update({name: value}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(missing) }}
{% endmacro %}


{#- A SQL string literal of `value`: backslashes and quotes escaped, so no
    value can end the literal. -#}
{% macro _string_literal(value) %}
  {{- return("'" ~ (value | string) | replace("\\", "\\\\") | replace("'", "\\'") ~ "'") -}}
{% endmacro %}


{#- What bringing an existing history table in line with the model changes:
    its name (a former table is renamed, its version key column with it), its
    layout, its properties (a table built before a property existed gets it
    here), its columns (schema_sync.sql). Planned whole before any DDL, so that
    the block checks the select first when `changes_table` and bad input leaves
    the table as it was. -#}
{% macro _history_table_changes(cfg, found, state, select_columns, managed) %}
  {#- The version key column is named after the table. It follows a rename
      from any former name, this run's or one a run killed after renaming the
      table made. -#}
  {%- set managed_renames = [] -%}
  {%- for former in cfg.former_names -%}
    {%- do managed_renames.append(((former ~ '_key') | lower, cfg.version_key)) -%}
  {%- endfor -%}
  {%- set plan = historize._schema_sync_plan(cfg, found.relation, state, select_columns, managed, managed_renames) -%}
  {%- set layout = historize._history_properties(cfg).get('historize.partitioned_by') -%}
  {%- set relayout = layout is not none and state.properties.get('historize.partitioned_by') != layout -%}
  {%- set properties = {} if relayout else historize._missing_properties(historize._history_properties(cfg), state) -%}
  {{ return({'plan': plan, 'relayout': relayout, 'properties': properties,
             'changes_table': found.former is not none or plan.changed or properties | length > 0 or relayout}) }}
{% endmacro %}


{#- Applies `changes` (_history_table_changes) to the table: rename, layout,
    properties, then columns, new ones after the column `before`. -#}
{% macro _sync_history_table(cfg, found, history, state, changes, before) %}
  {%- if found.former is not none -%}
    {{ historize._rename_table(found.former, history, cfg.model_name) }}
  {%- endif -%}
  {%- if changes.relayout -%}
    {{ historize._relayout_history_table(cfg, history, state) }}
  {%- endif -%}
  {%- if changes.properties -%}
    {%- call statement('set_properties') -%}
      alter table {{ history }} set {{ historize._properties_clause(changes.properties) }}
    {%- endcall -%}
  {%- endif -%}
  {{ historize._schema_sync_apply(changes.plan, cfg, history, before) }}
{% endmacro %}


{#- A table laid out otherwise (built by an earlier version of the
    materialization, or before the model's partition_by changed: its
    `historize.partitioned_by` is not the model's) rewritten in the
    materialization's layout, in one commit: every row kept, its Delta history kept (a REPLACE is a commit of
    the same table, so time travel still reaches the versions before it).
    Properties become the model's (historize.retired.* marks are kept). -#}
{% macro _relayout_history_table(cfg, history, state) %}
  {%- set properties = historize._history_properties(cfg) -%}
  {%- for name, value in state.properties.items() if name.startswith('historize.retired.') -%}
    {%- do properties.update({name: value}) -%}
  {%- endfor -%}
  {{ log("historize: " ~ cfg.model_name ~ ": rewriting " ~ history ~ " partitioned by "
      ~ cfg.partition_by | join(', ') ~ " (was: " ~ state.properties.get('historize.partitioned_by', 'not partitioned by historize') ~ ")", info=true) }}
  {%- call statement('relayout') -%}
    replace table {{ history }}
    using delta
    partitioned by ({{ historize._column_list(cfg.partition_by) }})
    {{ historize._properties_clause(properties) }}
    as select * from {{ history }}
  {%- endcall -%}
{% endmacro %}


{% macro _log_full_refresh(model_name) %}
  {%- if should_full_refresh() -%}
    {{ log("historize: " ~ model_name ~ ": --full-refresh never rebuilds a history table; loading incrementally", info=true) }}
  {%- endif -%}
{% endmacro %}
