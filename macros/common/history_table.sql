{#- The history table itself: finding it (under its name or a former one),
    creating it with its properties, reading its state, keeping its properties
    in line with the model. -#}

{#- The relations of a load: `history` (the model's table), `existing` (it,
    if it exists), the session views `staged` (the staged select) and
    `change_set` (the change set, when the load caches it: `cached` lists it
    then), and `found`: the history table to load, {'relation', 'former'},
    under the model's name or, when that does not exist, under one of its
    former_names (`former`, then renamed by _sync_history_table); with
    `former_suffix`, only from a name ending in it. Both must be Delta tables.
    A --full-refresh never rebuilds a history table: it is said, and the load
    goes on. -#}
{% macro _history_relations(cfg, former_suffix=none) %}
  {%- if should_full_refresh() -%}
    {{ log("historize: " ~ cfg.model_name ~ ": --full-refresh never rebuilds a history table; loading incrementally", info=true) }}
  {%- endif -%}
  {%- set history = this.incorporate(type='table') -%}
  {%- set existing = load_cached_relation(this) -%}
  {{ historize._assert_delta_table(existing, cfg.model_name) }}
  {%- set formers = [] -%}
  {%- for former in cfg.former_names if existing is none -%}
    {%- set relation = adapter.get_relation(database=history.database, schema=history.schema, identifier=former) -%}
    {%- if relation is not none -%}{%- do formers.append(relation) -%}{%- endif -%}
  {%- endfor -%}
  {%- if formers | length > 1 -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": several of its former names exist as tables: "
        ~ formers | join(', ') ~ "; keep one. Nothing was written") }}
  {%- endif -%}
  {%- if formers and former_suffix and not (formers[0].identifier | lower).endswith(former_suffix) -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": its former name " ~ formers[0]
        ~ " does not end in " ~ former_suffix ~ "; a history table is only taken over from another history table. Nothing was written") }}
  {%- endif -%}
  {%- set former = formers[0] if formers else none -%}
  {{ historize._assert_delta_table(former, cfg.model_name) }}
  {{ return({
      'history': history,
      'existing': existing,
      'staged': make_temp_relation(this, '__historize_source').incorporate(type='view'),
      'change_set': make_temp_relation(this, '__historize_changes').incorporate(type='view'),
      'cached': [],
      'found': {'relation': existing if existing is not none else former, 'former': former},
  }) }}
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


{#- The statement that creates a history (or audit) table: from `columns`
    ((name, type) pairs) or as `select_sql`. `for_model` adds the model's
    partitioning, location and comment (not wanted on an audit table);
    `partition_by` (a list of columns) is the materialization's own layout, in
    place of the model's. `replace`: the table exists and is replaced, in one
    commit of the same table (time travel still reaches its versions before). -#}
{% macro _create_history_table_sql(relation, properties, columns=none, select_sql=none, for_model=true,
                                   partition_by=none, replace=false) %}
    {{ 'replace' if replace else 'create' }} table {{ relation }}
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
    {{ adapter.dispatch('location_clause_sql', 'historize')() }}
    {{ comment_clause() }}
    {%- endif %}
    {{ historize._properties_clause(properties) }}
    {%- if select_sql %}
    as
    {{ select_sql }}
    {%- endif %}
{% endmacro %}


{#- The model's `location` clause (its location_root config), as the adapter
    writes it: dbt-databricks's `location_clause` takes the model's catalog relation,
    dbt-spark's nothing. -#}
{% macro default__location_clause_sql() %}
  {{- return(location_clause()) -}}
{% endmacro %}

{% macro databricks__location_clause_sql() %}
  {{- return(location_clause(adapter.build_catalog_relation(config.model))) -}}
{% endmacro %}


{#- What bringing an existing history table in line with the model changes:
    its name (a former table is renamed, its version key column with it), its
    layout, its properties (a table built before a property existed gets it
    here), its columns (schema evolution, docs/schema_evolution.md: renames
    by former_names, new columns, retired columns kept and marked,
    reactivated ones, type widening; an ambiguous rename or a type change
    that is not a widening is refused, naming the columns; `managed` are the
    columns the materialization owns). Planned whole before any DDL, so
    that the block checks the select first when `alters_table` and bad input
    leaves the table as it was. Planned from the table's `state`, returned with
    the plan: its columns (in order, with types) and its properties.
    `computes_hash`: the materialization computes the hash column (false when
    the select gives its own row_hash, whose type is the select's). -#}
{% macro _plan_table_sync(cfg, found, select_columns, managed, computes_hash=true) %}
  {%- set state = historize._table_state(found.relation) -%}
  {%- set table_types, table_order, retired = state.types, state.order, state.retired -%}
  {#- The version key column is named after the table. It follows a rename
      from any former name, this run's or one a run killed after renaming the
      table made. -#}
  {%- set managed_renames = [] -%}
  {%- for former in cfg.former_names -%}
    {%- do managed_renames.append(((former ~ '_key') | lower, cfg.version_key)) -%}
  {%- endfor -%}
  {#- Its columns, against the select's business columns `select_columns`. -#}
  {%- set declared = historize._declared_former_names() -%}

  {%- set plan = {'renamed': [], 'added': [], 'retired': [], 'reactivated': [], 'widened': [], 'errors': []} -%}
  {%- set claimed = [] -%}
  {%- for old, new in managed_renames if old in table_order and new not in table_order -%}
    {%- do plan.renamed.append((old, new)) -%}
    {%- do claimed.append(old) -%}
  {%- endfor -%}
  {%- set managed_count = plan.renamed | length -%}
  {%- for column in select_columns -%}
    {%- set name = column.name | lower -%}
    {%- set type = column.data_type | lower -%}
    {%- set formers = (declared.get(name) or []) | reject('equalto', name) | list -%}
    {%- set present = formers | select('in', table_order) | reject('in', managed) | list -%}
    {%- set current = name -%}
    {%- if present and name in table_types -%}
      {%- do plan.errors.append("column " ~ name ~ " and its former name " ~ present | join(', ')
          ~ " are both in the table; rename or drop one by hand") -%}
    {%- elif present | length > 1 -%}
      {%- do plan.errors.append("column " ~ name ~ " has several former names in the table: " ~ present | join(', ')) -%}
    {%- elif present -%}
      {%- do plan.renamed.append((present[0], name)) -%}
      {%- do claimed.append(present[0]) -%}
      {%- set current = present[0] -%}
    {%- endif -%}
    {%- if current in table_types -%}
      {%- do claimed.append(current) -%}
      {%- set old_type = table_types[current] -%}
      {%- if old_type != type -%}
        {%- if historize._is_type_widening(old_type, type) -%}
          {%- do plan.widened.append((name, old_type, type)) -%}
        {%- else -%}
          {%- do plan.errors.append("column " ~ name ~ " changes type from " ~ old_type ~ " to " ~ type
              ~ ", which is not a widening Delta can apply in place") -%}
        {%- endif -%}
      {%- endif -%}
      {%- if current in retired -%}{%- do plan.reactivated.append(name) -%}{%- endif -%}
    {%- elif not present -%}
      {%- do plan.added.append((name, type)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for name in table_order if name not in claimed and name not in managed and name not in retired -%}
    {%- do plan.retired.append(name) -%}
  {%- endfor -%}

  {#- The version key and the hash as an earlier release stored them, as hex text: rewritten
      compact (binary and bigint, hash_key and row_hash) with the rest of the table. -#}
  {%- set reformat = historize._hex_text_columns(cfg, table_types, plan.renamed[:managed_count], computes_hash) -%}
  {%- do plan.update({'reformat': reformat}) -%}

  {%- if plan.errors -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": cannot bring " ~ found.relation
        ~ " in line with the select: " ~ plan.errors | join('; ') ~ ". Nothing was written") }}
  {%- endif -%}
  {%- do plan.update({'changed': (plan.renamed or plan.added or plan.retired or plan.reactivated or plan.widened) | length > 0,
                      'rehash': cfg.hash_column is not none and (plan.renamed | length > managed_count or plan.retired
                                 or plan.reactivated or plan.widened or 'historize.rehash_pending' in state.properties),
                      'rehash_marked': 'historize.rehash_pending' in state.properties,
                      'widening_enabled': state.properties.get('delta.enableTypeWidening') == 'true',
                      'table_order': table_order}) -%}
  {%- set wanted_properties = historize._history_properties(cfg) -%}
  {#- The kind's properties of a large table (`cfg.large_table`: its size in bytes
      from which, and the properties), once the table's files are that large. -#}
  {%- set large = cfg.large_table is not none and state.size_bytes >= cfg.large_table.bytes -%}
  {%- if large -%}
    {%- do wanted_properties.update(cfg.large_table.properties) -%}
  {%- endif -%}
  {%- set layout = wanted_properties.get('historize.partitioned_by') -%}
  {%- set relayout = layout is not none and state.properties.get('historize.partitioned_by') != layout -%}
  {%- set missing_properties = {} if relayout else historize._missing_properties(wanted_properties, state.properties) -%}
  {{ return({'state': state, 'plan': plan, 'relayout': relayout, 'properties': missing_properties, 'large': large,
             'alters_table': found.former is not none or plan.changed or missing_properties | length > 0 or relayout
                              or reformat | length > 0}) }}
{% endmacro %}


{#- The properties of `wanted` the table lacks or holds with another value than
    in `held`. The protocol versions are only set at creation: Delta raises them
    itself as features need, and never lowers them. -#}
{% macro _missing_properties(wanted, held) %}
  {%- set missing = {} -%}
  {%- for name, value in wanted.items() if name not in ['delta.minReaderVersion', 'delta.minWriterVersion'] -%}
    {%- if held.get(name) | string != value | string -%}
      {%- do missing.update({name: value}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(missing) }}
{% endmacro %}

{#- The columns an earlier release stored as hex text (`table_types`, by name),
    to be rewritten compact: the version key, under its name or a former one
    (`key_renames`: the renames of the version key column), and the hash, when
    the materialization `computes_hash`. -#}
{% macro _hex_text_columns(cfg, table_types, key_renames, computes_hash) %}
  {%- set key_types = [table_types.get(cfg.version_key)] -%}
  {%- for old, new in key_renames -%}{%- do key_types.append(table_types[old]) -%}{%- endfor -%}
  {%- set found = [] -%}
  {%- if 'string' in key_types -%}{%- do found.append(cfg.version_key) -%}{%- endif -%}
  {%- if computes_hash and cfg.hash_column and table_types.get(cfg.hash_column) == 'string' -%}
    {%- do found.append(cfg.hash_column) -%}
  {%- endif -%}
  {{ return(found) }}
{% endmacro %}



{#- What a table is now (`relation`): its `columns` (dbt Columns), `properties`, the size
    of its files in bytes (`size_bytes`), each column's type by lowercase name
    (`types`), their `order`, and the columns retired from the select (`retired`:
    name to the instant, from the table's `historize.retired.<name>` properties).
    Delta's `describe detail` gives the properties and the size in one statement.
    Its map of properties comes back as JSON text, or as pairs from some drivers;
    a Thrift server writes the map's text unescaped, so a value holding a quote
    reads as no JSON, and the properties are then read by `show tblproperties`. -#}
{% macro _table_state(relation) %}
  {%- set detail = run_query('describe detail ' ~ relation).rows[0] -%}
  {%- set given = detail['properties'] -%}
  {%- set given = fromjson(given, none) if given is string else given or {} -%}
  {%- if given is none -%}
    {%- set given = run_query('show tblproperties ' ~ relation).rows -%}
  {%- endif -%}
  {%- set state = {'relation': relation, 'columns': adapter.get_columns_in_relation(relation), 'properties': {},
                   'size_bytes': detail['sizeInBytes'] | int, 'types': {}, 'order': [], 'retired': {}} -%}
  {%- for name, value in (given.items() if given is mapping else given) -%}
    {%- do state.properties.update({name: value}) -%}
  {%- endfor -%}
  {%- for column in state.columns -%}
    {%- do state.types.update({column.name | lower: column.data_type | lower}) -%}
    {%- do state.order.append(column.name | lower) -%}
  {%- endfor -%}
  {%- set retired_prefix = 'historize.retired.' -%}
  {%- for name, value in state.properties.items() if name.startswith(retired_prefix) -%}
    {%- do state.retired.update({name[retired_prefix | length:]: value}) -%}
  {%- endfor -%}
  {{ return(state) }}
{% endmacro %}


{#- The former names of each column, {column: [names]}: from the column's meta in
    this model's YAML, else in the YAML of the first upstream node that declares
    them for a column of that name. -#}
{% macro _declared_former_names() %}
  {%- set nodes = [model] -%}
  {%- for node_id in model.depends_on.nodes -%}
    {%- set node = graph.nodes.get(node_id) or graph.sources.get(node_id) -%}
    {%- if node -%}{%- do nodes.append(node) -%}{%- endif -%}
  {%- endfor -%}
  {%- set declared = {} -%}
  {%- for node in nodes -%}
    {%- for column_name, column in (node.columns or {}).items() if column_name | lower not in declared -%}
      {%- set meta = column.get('meta') or (column.get('config') or {}).get('meta') or {} -%}
      {%- set names = meta.get('former_names') or [] -%}
      {%- if names -%}
        {%- do declared.update({column_name | lower: ([names] if names is string else names) | map('lower') | list}) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(declared) }}
{% endmacro %}


{#- Applies `table_sync` (_plan_table_sync) to the table: rename,
    properties, columns (new ones after the column `before`), then layout and
    compact keys. `hash_sql` is the hash column's value over the table's
    columns (none: the select gives its own): after a schema change that
    alters the hashed columns, it recomputes the stored hashes of the
    `current_rows` (a predicate on the table), then the table's mark that they were due is cleared. A run killed
    before this leaves the mark, and its rerun rehashes. -#}
{% macro _sync_history_table(cfg, found, history, table_sync, before, hash_sql=none, current_rows=none) %}
  {%- if found.former is not none -%}
    {{ historize._rename_table(found.former, history, cfg.model_name) }}
  {%- endif -%}
  {%- if table_sync.properties -%}
    {%- set listed = [] -%}
    {%- for name, value in table_sync.properties.items() -%}{%- do listed.append(name ~ " = " ~ value) -%}{%- endfor -%}
    {{ log("historize: " ~ cfg.model_name ~ ": setting properties of " ~ history ~ ": " ~ listed | join(', '), info=true) }}
    {%- call statement('set_properties') -%}
      alter table {{ history }} set {{ historize._properties_clause(table_sync.properties) }}
    {%- endcall -%}
  {%- endif -%}
  {{ historize._sync_history_columns(cfg, history, table_sync, before) }}
  {%- if table_sync.relayout or table_sync.plan.reformat -%}
    {#- A table laid out otherwise (built by an earlier version of the materialization, or
        before the model's partition_by changed: its `historize.partitioned_by` is not the
        model's), or whose version keys and hashes are hex text (an earlier release's), is
        rewritten in one commit: every row kept, each version's key the first 32 hex digits
        of its text as binary (hash_key's), each hash recomputed; its Delta history kept. -#}
    {%- set converted = {} -%}
    {%- if cfg.version_key in table_sync.plan.reformat -%}
      {%- do converted.update({cfg.version_key: historize._hash_key_from_hex(cfg.version_key)}) -%}
    {%- endif -%}
    {%- if cfg.hash_column in table_sync.plan.reformat -%}
      {%- do converted.update({cfg.hash_column: hash_sql}) -%}
    {%- endif -%}
    {{ log("historize: " ~ cfg.model_name ~ ": rewriting " ~ history
        ~ (" partitioned by " ~ cfg.partition_by | join(', ') ~ " (was: " ~ table_sync.state.properties.get('historize.partitioned_by', 'not partitioned by historize') ~ ")" if table_sync.relayout else "")
        ~ (", " ~ converted.keys() | join(' and ') ~ " stored compact" if converted else ""), info=true) }}
    {{ historize._rewrite_table(history, historize._history_properties(cfg), converted, partition_by=cfg.partition_by) }}
  {%- endif -%}
  {%- if table_sync.plan.rehash and cfg.hash_column -%}
    {%- if hash_sql and cfg.hash_column not in table_sync.plan.reformat -%}
      {%- call statement('rehash') -%}
        update {{ history }}
        set {{ historize._quote(cfg.hash_column) }} = {{ hash_sql }}
        where {{ current_rows }}
      {%- endcall -%}
    {%- endif -%}
    {%- call statement('rehash_done') -%}
      alter table {{ history }} unset tblproperties if exists ({{ historize._string_literal('historize.rehash_pending') }})
    {%- endcall -%}
  {%- endif -%}
{% endmacro %}

{#- The table's columns brought in line with the plan of `table_sync`: each
    change one DDL statement, each safe to rerun (a rerun plans only what is
    still missing); new columns go before the column `before`. First, in one
    commit: type widening enabled, and the mark that the stored hashes are due
    (cleared once they are rehashed), so that a run killed anywhere between
    here and the rehash leaves it. -#}
{% macro _sync_history_columns(cfg, history, table_sync, before) %}
  {%- set at = historize.load_timestamp() -%}
  {%- set previous = table_sync.plan.table_order[table_sync.plan.table_order.index(before) - 1] -%}
  {%- set renamed_to = {} -%}
  {%- for old, new in table_sync.plan.renamed -%}{%- do renamed_to.update({old: new}) -%}{%- endfor -%}
  {%- set anchors = [renamed_to.get(previous, previous)] + table_sync.plan.added | map(attribute=0) | list -%}
  {%- set first = {} -%}
  {%- if table_sync.plan.widened and not table_sync.plan.widening_enabled -%}{%- do first.update({'delta.enableTypeWidening': 'true'}) -%}{%- endif -%}
  {%- if table_sync.plan.rehash and not table_sync.plan.rehash_marked -%}{%- do first.update({'historize.rehash_pending': at}) -%}{%- endif -%}
  {%- if first -%}
    {%- call statement('schema_change_properties') -%}
      alter table {{ history }} set {{ historize._properties_clause(first) }}
    {%- endcall -%}
  {%- endif -%}
  {%- for old, new in table_sync.plan.renamed -%}
    {%- call statement('rename_' ~ old) -%}
      alter table {{ history }} rename column {{ historize._quote(old) }} to {{ historize._quote(new) }}
    {%- endcall -%}
  {%- endfor -%}
  {%- for name, old_type, new_type in table_sync.plan.widened -%}
    {%- call statement('widen_' ~ name) -%}
      alter table {{ history }} alter column {{ historize._quote(name) }} type {{ new_type }}
    {%- endcall -%}
  {%- endfor -%}
  {%- for name, type in table_sync.plan.added -%}
    {%- call statement('add_' ~ name) -%}
      alter table {{ history }} add columns ({{ historize._quote(name) }} {{ type }} after {{ historize._quote(anchors[loop.index0]) }})
    {%- endcall -%}
  {%- endfor -%}
  {%- for name in table_sync.plan.retired -%}
    {%- call statement('retire_' ~ name) -%}
      alter table {{ history }} alter column {{ historize._quote(name) }}
        comment {{ historize._string_literal('retired at ' ~ at ~ ': no longer in the select of ' ~ cfg.model_name ~ '; NULL in versions loaded since') }}
    {%- endcall -%}
    {%- call statement('retire_property_' ~ name) -%}
      alter table {{ history }} set tblproperties ({{ historize._string_literal('historize.retired.' ~ name) }} = '{{ at }}')
    {%- endcall -%}
  {%- endfor -%}
  {%- for name in table_sync.plan.reactivated -%}
    {%- call statement('reactivate_' ~ name) -%}
      alter table {{ history }} alter column {{ historize._quote(name) }}
        comment {{ historize._string_literal((model.columns.get(name) or {}).get('description') or '') }}
    {%- endcall -%}
    {%- call statement('reactivate_property_' ~ name) -%}
      alter table {{ history }} unset tblproperties if exists ({{ historize._string_literal('historize.retired.' ~ name) }})
    {%- endcall -%}
  {%- endfor -%}
  {%- if table_sync.plan.changed -%}
    {{ log("historize: " ~ cfg.model_name ~ ": schema: renamed " ~ (table_sync.plan.renamed | map('join', ' to ') | join(', ') or 'none')
        ~ "; added " ~ (table_sync.plan.added | map(attribute=0) | join(', ') or 'none')
        ~ "; retired " ~ (table_sync.plan.retired | join(', ') or 'none')
        ~ "; reactivated " ~ (table_sync.plan.reactivated | join(', ') or 'none')
        ~ "; widened " ~ (table_sync.plan.widened | map(attribute=0) | join(', ') or 'none'), info=true) }}
  {%- endif -%}
{% endmacro %}




{#- Rewrites `relation` in one commit (a REPLACE of the same table), every row
    kept, the columns named in `converted` as its expressions (over the
    table's columns); its properties `properties` over those it has now but
    for the ones Delta keeps itself (protocol, features, row tracking's and
    column mapping's internal names); `for_model` and `partition_by` as
    _create_history_table_sql's. -#}
{% macro _rewrite_table(relation, properties, converted, for_model=true, partition_by=none) %}
  {%- set kept = {} -%}
  {%- for name, value in run_query('show tblproperties ' ~ relation).rows if name not in ['delta.minReaderVersion',
        'delta.minWriterVersion', 'delta.columnMapping.maxColumnId', 'delta.lastUpdateVersion', 'delta.lastCommitTimestamp']
        and not name.startswith('delta.feature.') and not name.startswith('delta.rowTracking.') -%}
    {%- do kept.update({name: value}) -%}
  {%- endfor -%}
  {%- do kept.update(properties) -%}
  {%- set every_row_sql -%}
    select
    {%- for column in adapter.get_columns_in_relation(relation) %}
        {%- set name = column.name | lower %}
        {{ converted.get(name, historize._quote(name)) }} as {{ historize._quote(name) }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ relation }}
  {%- endset -%}
  {%- call statement('rewrite_' ~ relation.identifier) -%}
    {{ historize._create_history_table_sql(relation, kept, select_sql=every_row_sql, for_model=for_model,
        partition_by=partition_by, replace=true) }}
  {%- endcall -%}
{% endmacro %}


{#- True when Delta's type widening changes `old` into `new` in place. -#}
{% macro _is_type_widening(old, new) %}
  {%- set integral = ['tinyint', 'smallint', 'int', 'bigint'] -%}
  {%- set digits = {'tinyint': 3, 'smallint': 5, 'int': 10, 'bigint': 20} -%}
  {%- set old_decimal = modules.re.match('decimal\\((\\d+),\\s*(\\d+)\\)', old) -%}
  {%- set new_decimal = modules.re.match('decimal\\((\\d+),\\s*(\\d+)\\)', new) -%}
  {%- if old in integral and new in integral -%}
    {{ return(integral.index(new) > integral.index(old)) }}
  {%- elif old in ['tinyint', 'smallint', 'int', 'float'] and new == 'double' -%}
    {{ return(true) }}
  {%- elif old == 'date' and new == 'timestamp_ntz' -%}
    {{ return(true) }}
  {%- elif old in integral and new_decimal -%}
    {{ return((new_decimal.group(1) | int) - (new_decimal.group(2) | int) >= digits[old]) }}
  {%- elif old_decimal and new_decimal -%}
    {%- set p1, s1 = old_decimal.group(1) | int, old_decimal.group(2) | int -%}
    {%- set p2, s2 = new_decimal.group(1) | int, new_decimal.group(2) | int -%}
    {{ return(p2 >= p1 and s2 >= s1 and p2 - s2 >= p1 - s1 and (p2, s2) != (p1, s1)) }}
  {%- endif -%}
  {{ return(false) }}
{% endmacro %}
