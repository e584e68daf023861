{#- Reads and validates every scd_type6 option in one place, and names the
    table's technical columns once; the checks that need the select's columns
    are in _scd_type6_columns. -#}
{% macro _scd_type6_config() %}
  {%- set cfg = historize._history_config('scd_type6') -%}
  {%- set deletes = historize._read_option('deletes', 'close', one_of=['close', 'ignore']) -%}
  {%- set audit = historize._read_option('audit', false, one_of=[true, false]) -%}
  {%- set type3 = historize._read_option('type3_columns', {}) -%}
  {%- set type3_map = {} -%}
  {%- if type3 is mapping -%}
    {%- for base, previous in type3.items() -%}{%- do type3_map.update({base | lower: previous | lower}) -%}{%- endfor -%}
  {%- else -%}
    {%- for base in historize._as_name_list('type3_columns', type3) -%}
      {%- do type3_map.update({base: 'previous_' ~ base}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- do cfg.update({
      'type0': historize._as_name_list('type0_columns', historize._read_option('type0_columns', [])),
      'type1': historize._as_name_list('type1_columns', historize._read_option('type1_columns', [])),
      'type3': type3_map,
      'deletes': deletes,
      'audit': audit,
      'actor': historize._read_option('actor', model.name) | string,
      'valid_from': 'effective_from',
      'valid_to': 'effective_to',
      'current_flag': 'current_flag',
      'version': 'version',
      'change_reason': 'change_reason',
      'hash_column': '_hash',
      'audit_properties': {'delta.appendOnly': 'true', 'delta.columnMapping.mode': 'name'},
  }) -%}
  {#- Written after the select's columns and the Type 3 columns, in this order. -#}
  {%- do cfg.update({'technical_columns': [cfg.valid_from, cfg.valid_to, cfg.current_flag, cfg.version,
        cfg.change_reason, cfg.hash_column]}) -%}
  {{ return(cfg) }}
{% endmacro %}


{#- The select's columns as scd_type6 uses them, checked: `attributes` (all
    but the key and change_reason, in select order), `type2` (attributes of no
    other type), `types` (name to type), `table_types` (the dimension's
    (name, type) pairs, in table order), `audit_types` (the audit table's),
    `has_reason`. -#}
{% macro _scd_type6_columns(cfg, select_columns) %}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {%- set name = cfg.model_name -%}
  {{ historize._assert_columns_present(cfg.unique_key, select_names, 'unique_key', name) }}
  {{ historize._assert_columns_present(cfg.type0, select_names, 'type0_columns', name) }}
  {{ historize._assert_columns_present(cfg.type1, select_names, 'type1_columns', name) }}
  {{ historize._assert_columns_present(cfg.type3.keys() | list, select_names, 'type3_columns', name) }}
  {%- set twice = cfg.type0 | select('in', cfg.type1 + cfg.unique_key) | list + cfg.type1 | select('in', cfg.unique_key) | list -%}
  {%- if twice -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": column(s) " ~ twice | join(', ')
        ~ " listed under two SCD types (unique_key, type0_columns, type1_columns)") }}
  {%- endif -%}
  {%- set reserved = [cfg.version_key] + cfg.technical_columns | reject('equalto', cfg.change_reason) | list -%}
  {%- set type2 = [] -%}
  {%- for column in select_names if column not in cfg.unique_key + cfg.type0 + cfg.type1 + [cfg.change_reason] -%}
    {%- if column in reserved -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": the select has column " ~ column
          ~ ", which scd_type6 writes itself; rename it in the select") }}
    {%- endif -%}
    {%- do type2.append(column) -%}
  {%- endfor -%}
  {%- for base, previous in cfg.type3.items() -%}
    {%- if base not in type2 -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": type3_columns names " ~ base
          ~ ", which is not a Type 2 column (Type 2: " ~ type2 | join(', ') ~ ")") }}
    {%- endif -%}
    {%- if previous in select_names or previous in reserved -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": the previous-value column " ~ previous
          ~ " of " ~ base ~ " collides with a column of the select or of the table") }}
    {%- endif -%}
  {%- endfor -%}
  {%- set types = {} -%}
  {%- for column in select_columns -%}{%- do types.update({column.name | lower: column.data_type}) -%}{%- endfor -%}
  {%- set attributes = select_names | reject('in', cfg.unique_key + [cfg.change_reason]) | list -%}
  {%- set table_types = [(cfg.version_key, 'binary')] -%}
  {%- for name in cfg.unique_key + attributes -%}{%- do table_types.append((name, types[name])) -%}{%- endfor -%}
  {%- for base, previous in cfg.type3.items() -%}{%- do table_types.append((previous, types[base])) -%}{%- endfor -%}
  {%- do table_types.extend([(cfg.valid_from, 'timestamp'), (cfg.valid_to, 'timestamp'), (cfg.current_flag, 'boolean'),
        (cfg.version, 'int'), (cfg.change_reason, 'string'), (cfg.hash_column, 'bigint')]) -%}
  {%- set audit_types = [] -%}
  {%- for name in cfg.unique_key -%}{%- do audit_types.append((name, types[name])) -%}{%- endfor -%}
  {%- do audit_types.extend([(cfg.version_key ~ '_old', 'binary'), (cfg.version_key ~ '_new', 'binary'),
        ('change_type', 'string'), ('changed_columns', 'array<string>'), ('old_values', 'map<string, string>'),
        ('new_values', 'map<string, string>'), ('change_ts', 'timestamp'), ('actor', 'string'), ('reason', 'string'),
        ('source_batch_id', 'string')]) -%}
  {{ return({
      'attributes': attributes,
      'type2': type2,
      'types': types,
      'table_types': table_types,
      'audit_types': audit_types,
      'has_reason': cfg.change_reason in select_names,
  }) }}
{% endmacro %}


{#- SQL builders of scd_type6. `columns` is _scd_type6_columns: `attributes`
    (the select's columns but the key and change_reason, in select order),
    `type2`, `types`, `table_types`. Aliases: `src` the staged select, `hist` the dimension,
    `chg` the change set. -#}

{#- named_struct of the attribute columns `names`, for min_by/max_by over versions. -#}
{% macro _scd_type6_attributes_struct(names) %}
  {%- set parts = [] -%}
  {%- for name in names -%}{%- do parts.append(historize._string_literal(name) ~ ", " ~ historize._quote(name)) -%}{%- endfor -%}
  {{- return('named_struct(' ~ parts | join(', ') ~ ')') -}}
{% endmacro %}


{#- Each key that needs a write, classified against the dimension `history`:
      _historize_action          new (no current row: first seen or back after
                                 a delete), changed (a Type 2 column differs),
                                 deleted, unchanged
      _historize_type1_changed   a Type 1 column differs from the key's latest version
      _historize_first           the key's first version's Type 0 columns
      _historize_latest          its latest version's columns `latest_columns`
    The dimension is read once, into one row per key (`versions_by_key`) that
    carries its current row too, and joined with the select once, as a
    hand-written job would: a second read for the current rows, and a second
    join, cost the load as much again as the aggregate. Keys are not checked
    here: the statement that reads it checks them (_load_checks_sql). -#}
{% macro _scd_type6_changes_sql(cfg, history, staged, columns, latest_columns) %}
  {%- set keys = cfg.unique_key -%}
  {%- set first_key = historize._quote(keys[0]) -%}
  {%- set q = historize._quote -%}
    with src as (
        select
            src.*,
            true as _historize_in_source,
            {{ historize.row_hash(columns.type2, 'src') }} as _historize_hash,
            {% if columns.has_reason %}coalesce(src.{{ q(cfg.change_reason) }}, 'source_load'){% else %}'source_load'{% endif %} as _historize_reason
        from {{ staged }} as src
    ),

    versions_by_key as (
        select
            {{ historize._column_list(keys, lines=true) }},
            {%- if cfg.type0 %}
            min_by({{ historize._scd_type6_attributes_struct(cfg.type0) }}, {{ q(cfg.version) }}) as _historize_first,
            {%- endif %}
            {%- if latest_columns %}
            max_by({{ historize._scd_type6_attributes_struct(latest_columns) }}, {{ q(cfg.version) }}) as _historize_latest,
            {%- endif %}
            max({{ q(cfg.version) }}) as _historize_max_version,
            max_by(named_struct(
                'version_key', {{ q(cfg.version_key) }},
                'valid_from', {{ q(cfg.valid_from) }},
                'hash', {{ q(cfg.hash_column) }}
            ), {{ q(cfg.version) }}) filter (where {{ q(cfg.current_flag) }}) as _historize_current
        from {{ history }}
        group by {{ historize._column_list(keys) }}
    ),

    classified as (
        select
            {{ historize._change_set_keys(keys, 'src', 'versions_by_key') }},
            src.*,
            versions_by_key._historize_current.version_key as _historize_current_key,
            versions_by_key._historize_current.valid_from as _historize_current_from,
            versions_by_key._historize_max_version,
            {%- if cfg.type0 %}
            versions_by_key._historize_first,
            {%- endif %}
            {%- if latest_columns %}
            versions_by_key._historize_latest,
            {%- endif %}
            versions_by_key.{{ first_key }} is not null as _historize_has_history,
            case
                when src._historize_in_source is null then
                    {% if cfg.deletes == 'close' %}case when versions_by_key._historize_current is not null then 'deleted' else 'unchanged' end{% else %}'unchanged'{% endif %}
                when versions_by_key._historize_current is null then 'new'
                when src._historize_hash <=> versions_by_key._historize_current.hash then 'unchanged'
                else 'changed'
            end as _historize_action,
            {% if cfg.type1 -%}
            coalesce(src._historize_in_source, false) and versions_by_key.{{ first_key }} is not null
                and not ({% for name in cfg.type1 %}src.{{ q(name) }} <=> versions_by_key._historize_latest.{{ q(name) }}{{ ' and ' if not loop.last }}{% endfor %})
            {%- else %}false{% endif %} as _historize_type1_changed
        from src
        full outer join versions_by_key on {{ historize._key_join(keys, 'src', 'versions_by_key') }}
    )

    select *
    from classified
    where _historize_action <> 'unchanged' or _historize_type1_changed
{% endmacro %}


{#- The instants of the older-load check (_load_checks_sql): a current row's
    start, a closed row's end, of the rows where one is newer than
    load_timestamp. -#}
{% macro _scd_type6_instants_sql(cfg, history) %}
  {%- set q = historize._quote -%}
    select case when {{ q(cfg.current_flag) }} then {{ q(cfg.valid_from) }} else {{ q(cfg.valid_to) }} end as version_instant
    from {{ history }}
    where {{ q(cfg.valid_from) }} > {{ historize.load_timestamp_sql() }}
        or (not {{ q(cfg.current_flag) }} and {{ q(cfg.valid_to) }} > {{ historize.load_timestamp_sql() }})
{% endmacro %}


{#- Whether a change row of a load's statement may be written: true once the
    load's checks passed (`historize_checks`) and, after a read (`read`, with an
    audit), the guard (`unchanged_since`); a row that would close a current row
    begun at this load_timestamp (a rerun over other data) raises the refusal
    naming its key. -#}
{% macro _scd_type6_row_checked(cfg, read) %}
  {%- set key_text = [] -%}
  {%- for name in historize._change_set_key_names(cfg.unique_key) -%}
    {%- do key_text.append('cast(chg.' ~ historize._quote(name) ~ ' as string)') -%}
  {%- endfor -%}
        case
            when chg._historize_action in ('changed', 'deleted') and chg._historize_current_from = {{ historize.load_timestamp_sql() }}
                then raise_error({{ historize._refusal('rerun_conflict_key', cfg.model_name,
                    ["concat_ws(', ', " ~ key_text | join(', ') ~ ")", 'chg._historize_action'], what='current row', sql=true) }})
            else historize_checks._historize_checked{{ ' and unchanged_since._historize_unchanged' if read else '' }}
        end
{%- endmacro %}


{#- The dimension's write: one MERGE that computes the change set, checks the
    load and writes it. Its source:
      historize_changes  the change set of the staged select `staged` (_scd_type6_changes_sql)
      historize_checks   one row whose `_historize_checked` is true, or raises the
                         first failing check's refusal before Delta writes anything
                         (_load_checks_sql, over _scd_type6_instants_sql)
      unchanged_since    with an audit, the guard of the read `read` (_unchanged_since):
                         the audit was written from the dimension as that read saw it
    then each change row once per role. A key's `update` row (it matches the
    key's rows) closes its current row, sets Type 1 values on all its rows and
    marks a delete; its `insert` row (the role is part of the join condition,
    so it never matches) adds the new version. Every row joins on its own key,
    so Spark spreads the inserts over the MERGE's tasks by key (a NULL join key
    would send them all to one task, and one file). Without an audit, the
    load's one read of the dimension is this MERGE's own, so Delta's commit
    fails it if another run wrote what it read. -#}
{% macro _scd_type6_merge_sql(cfg, history, staged, columns, read) %}
  {%- set q = historize._quote -%}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set closes = "hist." ~ q(cfg.current_flag) ~ " and chg._historize_action in ('changed', 'deleted')" %}
    merge into {{ history }} as hist
    using (
        with historize_changes as (
            {{ historize._scd_type6_changes_sql(cfg, history, staged, columns,
                cfg.type1 + cfg.type3.keys() | list) | indent(8) }}
        ),

        historize_checks as (
            {{ historize._load_checks_sql(cfg, staged, history, historize._scd_type6_instants_sql(cfg, history)) | indent(8) }}
        )

        select
            chg.*,
            roles._historize_role
        from historize_changes as chg
        cross join historize_checks
        {%- if read %}
        cross join (
            {{ historize._unchanged_since(read, cfg) | indent(8) }}
        ) as unchanged_since
        {%- endif %}
        lateral view explode(
            case
                when _historize_has_history and _historize_action in ('new', 'changed')
                    and (_historize_action = 'changed' or _historize_type1_changed) then array('update', 'insert')
                when _historize_action in ('new', 'changed') then array('insert')
                else array('update')
            end
        ) roles as _historize_role
        where
            {{ historize._scd_type6_row_checked(cfg, read) | indent(4) }}
    ) as chg
    on {{ historize._key_join(cfg.unique_key, 'hist', 'chg', historize._change_set_key_names(cfg.unique_key)) }}
        and chg._historize_role = 'update'
    when matched and (chg._historize_type1_changed or ({{ closes }})) then update set
        {%- for name in cfg.type1 %}
        {{ q(name) }} = case when chg._historize_type1_changed then chg.{{ q(name) }} else hist.{{ q(name) }} end,
        {%- endfor %}
        {{ q(cfg.valid_to) }} = case when {{ closes }} then {{ at }} else hist.{{ q(cfg.valid_to) }} end,
        {{ q(cfg.current_flag) }} = case when {{ closes }} then false else hist.{{ q(cfg.current_flag) }} end,
        {{ q(cfg.change_reason) }} = case when hist.{{ q(cfg.current_flag) }} and chg._historize_action = 'deleted'
            then 'deleted_in_source' else hist.{{ q(cfg.change_reason) }} end
    when not matched and chg._historize_role = 'insert' then insert (
        {{ historize._column_list(columns.table_types | map(attribute=0) | list) }}
    ) values (
        {{ historize._version_key(cfg.unique_key, 'chg') }},
        {{ historize._column_list(cfg.unique_key, 'chg') }},
        {%- for name in columns.attributes %}
        {% if name in cfg.type0 %}case when chg._historize_has_history then chg._historize_first.{{ q(name) }} else chg.{{ q(name) }} end{% else %}chg.{{ q(name) }}{% endif %},
        {%- endfor %}
        {%- for base in cfg.type3.keys() %}
        case when chg._historize_has_history then chg._historize_latest.{{ q(base) }} end,
        {%- endfor %}
        {{ at }},
        timestamp'9999-12-31 23:59:59+00:00',
        true,
        cast(coalesce(chg._historize_max_version, 0) + 1 as int),
        chg._historize_reason,
        chg._historize_hash
    )
{% endmacro %}


{#- The audit's write: one audit row per key this load changes, from the
    change set of the dimension `history`, checked as the dimension's MERGE
    checks it and guarded by the read `read` (_unchanged_since), which the
    dimension's MERGE then checks again. It inserts only the rows not there
    yet, so a rerun of the load writes none. -#}
{% macro _scd_type6_audit_merge_sql(cfg, audit, history, staged, columns, read) %}
  {%- set q = historize._quote -%}
  {%- set attributes = columns.attributes -%}
  {%- set tracked = cfg.type1 + (attributes | reject('in', cfg.type0 + cfg.type1) | list) -%}
  {%- set key_names = historize._change_set_key_names(cfg.unique_key) -%}
  {%- set audit_columns = columns.audit_types | map(attribute=0) | list %}
    merge into {{ audit }} as audit
    using (
        with historize_changes as (
            {{ historize._scd_type6_changes_sql(cfg, history, staged, columns, attributes) | indent(8) }}
        ),

        historize_checks as (
            {{ historize._load_checks_sql(cfg, staged, history, historize._scd_type6_instants_sql(cfg, history)) | indent(8) }}
        ),

        checked as (
            select
                chg.*,
                case
                    when chg._historize_action = 'deleted' then 'LOGICAL_DELETE'
                    when chg._historize_action = 'new' then 'INSERT'
                    when chg._historize_action = 'changed' then 'UPDATE'
                    else 'TYPE1_UPDATE'
                end as change_type,
                case
                    when chg._historize_action = 'deleted' then cast(array() as array<string>)
                    when chg._historize_action = 'new' and not chg._historize_has_history then array({% for name in attributes %}{{ historize._string_literal(name) }}{{ ', ' if not loop.last }}{% endfor %})
                    else filter(array({% for name in tracked %}case when not (chg.{{ q(name) }} <=> chg._historize_latest.{{ q(name) }}) then {{ historize._string_literal(name) }} end{{ ', ' if not loop.last }}{% endfor %}), c -> c is not null)
                end as changed_columns
            from historize_changes as chg
            cross join historize_checks
            cross join (
                {{ historize._unchanged_since(read, cfg) | indent(12) }}
            ) as unchanged_since
            where
                {{ historize._scd_type6_row_checked(cfg, read) | indent(8) }}
        )

        select
            {%- for name in cfg.unique_key %}
            classified.{{ q(key_names[loop.index0]) }} as {{ q(name) }},
            {%- endfor %}
            classified._historize_current_key as {{ q(cfg.version_key ~ '_old') }},
            case
                when classified._historize_action in ('new', 'changed') then {{ historize._version_key(cfg.unique_key, 'classified') }}
                when classified._historize_action = 'deleted' then null
                else classified._historize_current_key
            end as {{ q(cfg.version_key ~ '_new') }},
            classified.change_type,
            classified.changed_columns,
            {{ historize._scd_type6_audit_values(attributes, 'classified._historize_latest.', old=true) }} as old_values,
            {{ historize._scd_type6_audit_values(attributes, 'classified.') }} as new_values,
            {{ historize.load_timestamp_sql() }} as change_ts,
            {{ historize._string_literal(cfg.actor) }} as actor,
            case when classified._historize_action = 'deleted' then 'deleted_in_source' else classified._historize_reason end as reason,
            {{ historize._string_literal(historize.load_run_id()) }} as source_batch_id
        from checked as classified
    ) as changed
    on {% for name in cfg.unique_key %}audit.{{ q(name) }} = changed.{{ q(name) }} and {% endfor -%}
        audit.change_ts = changed.change_ts and audit.change_type = changed.change_type
    when not matched then insert (
        {{ historize._column_list(audit_columns) }}
    ) values (
        {{ historize._column_list(audit_columns, 'changed') }}
    )
{% endmacro %}


{#- The changed columns' values as text, from `prefix` (the key's latest
    version, or the select's row); an old value only when the key has one. -#}
{% macro _scd_type6_audit_values(attributes, prefix, old=false) %}
  {%- set values = [] -%}
  {%- for name in attributes -%}{%- do values.append('cast(' ~ prefix ~ historize._quote(name) ~ ' as string)') -%}{%- endfor -%}
            map_filter(map_from_arrays(array({% for name in attributes %}{{ historize._string_literal(name) }}{{ ', ' if not loop.last }}{% endfor %}),
                array({{ values | join(', ') }})),
                (k, v) -> array_contains(classified.changed_columns, k){{ ' and classified._historize_has_history' if old else '' }})
{%- endmacro %}

