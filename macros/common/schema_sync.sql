{#- Schema evolution of a history table, before a load. Compares the select's
    columns with the table's and brings the table in line without losing
    history: renames by former_names, new columns, retired columns (kept, marked),
    reactivated columns, type widening. Everything is checked before any DDL,
    so a bad case changes nothing. See docs/schema_evolution.md. -#}

{#- The former names of a select column: from the column's meta in this model's
    YAML, else in the YAML of an upstream node with a column of that name. -#}
{% macro _former_names(column_name) %}
  {%- set own = historize._column_former_names(model.columns, column_name) -%}
  {%- if own -%}
    {{ return(own) }}
  {%- endif -%}
  {%- for node_id in model.depends_on.nodes -%}
    {%- set node = graph.nodes.get(node_id) or graph.sources.get(node_id) -%}
    {%- set inherited = historize._column_former_names(node.columns, column_name) if node else [] -%}
    {%- if inherited -%}
      {{ return(inherited) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return([]) }}
{% endmacro %}


{% macro _column_former_names(columns, column_name) %}
  {%- for name, column in (columns or {}).items() if name | lower == column_name -%}
    {%- set meta = column.get('meta') or (column.get('config') or {}).get('meta') or {} -%}
    {%- set names = meta.get('former_names') or [] -%}
    {{ return(([names] if names is string else names) | map('lower') | list) }}
  {%- endfor -%}
  {{ return([]) }}
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


{#- What the table needs, from its `state` (_read_table_state): `select_columns`
    (name, data_type) are the select's business columns; `managed` the table's columns the materialization owns,
    `managed_renames` (old, new) pairs of them (a surrogate key named after a
    renamed table). Raises, naming the columns, on an ambiguous rename or a type
    change that is not a widening. -#}
{% macro _schema_sync_plan(cfg, history, state, select_columns, managed, managed_renames=[]) %}
  {%- set table_types = {} -%}
  {%- set table_order = [] -%}
  {%- for column in state.columns -%}
    {%- do table_types.update({column.name | lower: column.data_type | lower}) -%}
    {%- do table_order.append(column.name | lower) -%}
  {%- endfor -%}
  {%- set retired_prefix = 'historize.retired.' -%}
  {%- set retired = {} -%}
  {%- for name, value in state.properties.items() if name.startswith(retired_prefix) -%}
    {%- do retired.update({historize._without_prefix(name, retired_prefix): value}) -%}
  {%- endfor -%}

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
    {%- set formers = historize._former_names(name) | reject('equalto', name) | list -%}
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

  {%- if plan.errors -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": cannot bring " ~ history
        ~ " in line with the select: " ~ plan.errors | join('; ') ~ ". Nothing was written") }}
  {%- endif -%}
  {%- do plan.update({'changed': (plan.renamed or plan.added or plan.retired or plan.reactivated or plan.widened) | length > 0,
                      'rehash': cfg.hash_column is not none and (plan.renamed | length > managed_count or plan.retired
                                 or plan.reactivated or plan.widened or 'historize.rehash_pending' in state.properties),
                      'rehash_marked': 'historize.rehash_pending' in state.properties,
                      'widening_enabled': state.properties.get('delta.enableTypeWidening') == 'true',
                      'table_order': table_order}) -%}
  {{ return(plan) }}
{% endmacro %}


{#- Applies a plan: each change is one DDL statement, each safe to rerun (a
    rerun plans only what is still missing). New columns go before the
    managed column `before`, after the business columns. -#}
{% macro _schema_sync_apply(plan, cfg, history, before) %}
  {%- set at = historize.load_timestamp() -%}
  {%- set previous = plan.table_order[plan.table_order.index(before) - 1] -%}
  {%- set renamed_to = {} -%}
  {%- for old, new in plan.renamed -%}{%- do renamed_to.update({old: new}) -%}{%- endfor -%}
  {%- set anchors = [renamed_to.get(previous, previous)] + plan.added | map(attribute=0) | list -%}
  {#- First, in one commit: type widening enabled, and the mark that the
      stored hashes are due (cleared by _rehash_after_schema_change), so that
      a run killed anywhere between here and the rehash leaves it. -#}
  {%- set first = {} -%}
  {%- if plan.widened and not plan.widening_enabled -%}{%- do first.update({'delta.enableTypeWidening': 'true'}) -%}{%- endif -%}
  {%- if plan.rehash and not plan.rehash_marked -%}{%- do first.update({'historize.rehash_pending': at}) -%}{%- endif -%}
  {%- if first -%}
    {%- call statement('schema_change_properties') -%}
      alter table {{ history }} set {{ historize._properties_clause(first) }}
    {%- endcall -%}
  {%- endif -%}
  {%- for old, new in plan.renamed -%}
    {%- call statement('rename_' ~ old) -%}
      alter table {{ history }} rename column {{ historize._quote(old) }} to {{ historize._quote(new) }}
    {%- endcall -%}
  {%- endfor -%}
  {%- for name, old_type, new_type in plan.widened -%}
    {%- call statement('widen_' ~ name) -%}
      alter table {{ history }} alter column {{ historize._quote(name) }} type {{ new_type }}
    {%- endcall -%}
  {%- endfor -%}
  {%- for name, type in plan.added -%}
    {%- call statement('add_' ~ name) -%}
      alter table {{ history }} add columns ({{ historize._quote(name) }} {{ type }} after {{ historize._quote(anchors[loop.index0]) }})
    {%- endcall -%}
  {%- endfor -%}
  {%- for name in plan.retired -%}
    {%- call statement('retire_' ~ name) -%}
      alter table {{ history }} alter column {{ historize._quote(name) }}
        comment {{ historize._string_literal('retired at ' ~ at ~ ': no longer in the select of ' ~ cfg.model_name ~ '; NULL in versions loaded since') }}
    {%- endcall -%}
    {%- call statement('retire_property_' ~ name) -%}
      alter table {{ history }} set tblproperties ({{ historize._string_literal('historize.retired.' ~ name) }} = '{{ at }}')
    {%- endcall -%}
  {%- endfor -%}
  {%- for name in plan.reactivated -%}
    {%- call statement('reactivate_' ~ name) -%}
      alter table {{ history }} alter column {{ historize._quote(name) }}
        comment {{ historize._string_literal((model.columns.get(name) or {}).get('description') or '') }}
    {%- endcall -%}
    {%- call statement('reactivate_property_' ~ name) -%}
      alter table {{ history }} unset tblproperties if exists ({{ historize._string_literal('historize.retired.' ~ name) }})
    {%- endcall -%}
  {%- endfor -%}
  {%- if plan.changed -%}
    {{ log("historize: " ~ cfg.model_name ~ ": schema: renamed " ~ (plan.renamed | map('join', ' to ') | join(', ') or 'none')
        ~ "; added " ~ (plan.added | map(attribute=0) | join(', ') or 'none')
        ~ "; retired " ~ (plan.retired | join(', ') or 'none')
        ~ "; reactivated " ~ (plan.reactivated | join(', ') or 'none')
        ~ "; widened " ~ (plan.widened | map(attribute=0) | join(', ') or 'none'), info=true) }}
  {%- endif -%}
{% endmacro %}


{#- After a schema change that alters the hashed columns: `update_sql`
    recomputes the current versions' stored hashes (none: the select gives its
    own), then the table's mark that they were due is cleared. A run killed
    before this leaves the mark, and its rerun rehashes. -#}
{% macro _rehash_after_schema_change(plan, history, update_sql=none) %}
  {%- if plan.rehash -%}
    {%- if update_sql -%}
      {%- call statement('rehash') -%}
        {{ update_sql }}
      {%- endcall -%}
    {%- endif -%}
    {%- call statement('rehash_done') -%}
      alter table {{ history }} unset tblproperties if exists ({{ historize._string_literal('historize.rehash_pending') }})
    {%- endcall -%}
  {%- endif -%}
{% endmacro %}
