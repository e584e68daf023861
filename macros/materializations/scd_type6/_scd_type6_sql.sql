{#- SQL builders of scd_type6. `attributes` are the select's columns other than
    the key and change_reason, in select order; `types` maps a column to its type. -#}

{% macro _scd_type6_table_columns(cfg, attributes) %}
  {{ return([cfg.surrogate_key] + cfg.unique_key + attributes + cfg.type3.values() | list
      + ['effective_from', 'effective_to', 'current_flag', 'version', 'change_reason', '_hash']) }}
{% endmacro %}


{% macro _scd_type6_create_sql(cfg, target, attributes, types) %}
    create table {{ target }} (
        {{ adapter.quote(cfg.surrogate_key) }} string,
        {%- for name in cfg.unique_key + attributes %}
        {{ adapter.quote(name) }} {{ types[name] }},
        {%- endfor %}
        {%- for base, previous in cfg.type3.items() %}
        {{ adapter.quote(previous) }} {{ types[base] }},
        {%- endfor %}
        effective_from timestamp,
        effective_to timestamp,
        current_flag boolean,
        version int,
        change_reason string,
        _hash string
    )
    using delta
    {{ partition_cols(label="partitioned by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
    tblproperties ('delta.columnMapping.mode' = 'name', 'delta.enableRowTracking' = 'true')
{% endmacro %}


{#- Each key that needs a write, classified against the table:
      _t6_type2_action  new (no current row: first seen or back after a delete),
                        changed (a Type 2 column differs), deleted, same, none
      _t6_type1_changed a Type 1 column differs from the key's latest version -#}
{% macro _scd_type6_changes_sql(cfg, target, source, attributes, type2, has_reason) %}
  {%- set keys = cfg.unique_key -%}
  {%- set first_key = adapter.quote(keys[0]) -%}
  {%- set q = adapter.quote -%}
    with src as (
        select
            s.*,
            {{ historize.row_hash(type2, 's') }} as _t6_hash,
            {% if has_reason %}coalesce(s.change_reason, 'source_load'){% else %}'source_load'{% endif %} as _t6_reason
        from {{ source }} as s
    ),

    current_rows as (
        select * from {{ target }} where current_flag
    ),

    key_summary as (
        select
            {{ historize._column_list(keys) }},
            max(version) as _t6_max_version,
            min_by(named_struct({% for name in attributes %}'{{ name }}', {{ q(name) }}{{ ', ' if not loop.last }}{% endfor %}), version) as _t6_first,
            max_by(named_struct({% for name in attributes %}'{{ name }}', {{ q(name) }}{{ ', ' if not loop.last }}{% endfor %}), version) as _t6_latest
        from {{ target }}
        group by {{ historize._column_list(keys) }}
    ),

    compared as (
        select
            {%- for name in keys %}
            coalesce(src.{{ q(name) }}, current_rows.{{ q(name) }}) as {{ q('_t6_key_' ~ loop.index0) }},
            {%- endfor %}
            src.*,
            current_rows.{{ q(cfg.surrogate_key) }} as _t6_current_key,
            current_rows.effective_from as _t6_current_from,
            key_summary._t6_max_version,
            key_summary._t6_first,
            key_summary._t6_latest,
            key_summary.{{ first_key }} is not null as _t6_has_history,
            case
                when src.{{ first_key }} is null then
                    {% if cfg.deletes == 'close' %}case when current_rows.{{ first_key }} is not null then 'deleted' else 'none' end{% else %}'none'{% endif %}
                when current_rows.{{ first_key }} is null then 'new'
                when src._t6_hash <=> current_rows._hash then 'same'
                else 'changed'
            end as _t6_type2_action,
            {% if cfg.type1 -%}
            src.{{ first_key }} is not null and key_summary.{{ first_key }} is not null
                and not ({% for name in cfg.type1 %}src.{{ q(name) }} <=> key_summary._t6_latest.{{ q(name) }}{{ ' and ' if not loop.last }}{% endfor %})
            {%- else %}false{% endif %} as _t6_type1_changed
        from src
        full outer join current_rows on {{ historize._key_join(keys, 'src', 'current_rows') }}
        left join key_summary
            on {% for name in keys -%}
                key_summary.{{ q(name) }} = coalesce(src.{{ q(name) }}, current_rows.{{ q(name) }}){{ ' and ' if not loop.last }}
            {%- endfor %}
    )

    select * from compared
    where _t6_type2_action in ('new', 'changed', 'deleted') or _t6_type1_changed
{% endmacro %}


{#- One row: what the run will do, the conflicts of a rerun over other data,
    and whether the load goes back in time. -#}
{% macro _scd_type6_plan_sql(cfg, target, changes) %}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set counted -%}
        select
            coalesce(sum(case when _t6_type2_action = 'new' then 1 else 0 end), 0) as inserted,
            coalesce(sum(case when _t6_type2_action = 'changed' then 1 else 0 end), 0) as changed,
            coalesce(sum(case when _t6_type2_action = 'deleted' then 1 else 0 end), 0) as deleted,
            coalesce(sum(case when _t6_type1_changed then 1 else 0 end), 0) as type1_changed,
            coalesce(sum(case when _t6_type2_action in ('changed', 'deleted') and _t6_current_from = {{ at }} then 1 else 0 end), 0) as conflicts,
            concat_ws('; ', slice(collect_list(case when _t6_type2_action in ('changed', 'deleted') and _t6_current_from = {{ at }}
                then concat('(', concat_ws(', ', {% for name in cfg.unique_key %}cast({{ adapter.quote('_t6_key_' ~ loop.index0) }} as string){{ ', ' if not loop.last }}{% endfor %}), ') ', _t6_type2_action) end), 1, 5)) as conflict_examples
        from {{ changes }}
  {%- endset -%}
  {{ historize._plan_with_newest_instant(counted, target,
      'greatest(max(effective_from), max(case when not current_flag then effective_to end))') }}
{% endmacro %}


{#- The dimension write: one MERGE. A key's existing rows are matched by one
    source row (close the current row, Type 1 values, delete reason); its new
    version comes from a second source row whose NULL key never matches. -#}
{% macro _scd_type6_merge_sql(cfg, target, changes, attributes, type2, unchanged) %}
  {%- set keys = cfg.unique_key -%}
  {%- set q = adapter.quote -%}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set closes = "t.current_flag and chg._t6_type2_action in ('changed', 'deleted')" -%}
    merge into {{ target }} as t
    using (
        select
            {%- for name in keys %}
            case when role = 'existing' then {{ q('_t6_key_' ~ loop.index0) }} end as {{ q('_t6_merge_key_' ~ loop.index0) }},
            {%- endfor %}
            role,
            chg.*
        from (select * from {{ changes }} where {{ unchanged }}) as chg
        lateral view explode(
            case
                when _t6_has_history and _t6_type2_action in ('new', 'changed')
                    and (_t6_type2_action = 'changed' or _t6_type1_changed) then array('existing', 'insert')
                when _t6_type2_action in ('new', 'changed') then array('insert')
                else array('existing')
            end
        ) roles as role
    ) as chg
    on {% for name in keys -%}
        t.{{ q(name) }} = chg.{{ q('_t6_merge_key_' ~ loop.index0) }}{{ ' and ' if not loop.last }}
    {%- endfor %}
    when matched and (chg._t6_type1_changed or ({{ closes }})) then update set
        {%- for name in cfg.type1 %}
        {{ q(name) }} = case when chg._t6_type1_changed then chg.{{ q(name) }} else t.{{ q(name) }} end,
        {%- endfor %}
        effective_to = case when {{ closes }} then {{ at }} else t.effective_to end,
        current_flag = case when {{ closes }} then false else t.current_flag end,
        change_reason = case when t.current_flag and chg._t6_type2_action = 'deleted' then 'deleted_in_source' else t.change_reason end
    when not matched and chg.role = 'insert' then insert (
        {{ historize._column_list(historize._scd_type6_table_columns(cfg, attributes)) }}
    ) values (
        {{ historize._scd_type6_new_key(cfg, 'chg') }},
        {{ historize._column_list(keys, 'chg') }},
        {%- for name in attributes %}
        {% if name in cfg.type0 %}case when chg._t6_has_history then chg._t6_first.{{ q(name) }} else chg.{{ q(name) }} end{% else %}chg.{{ q(name) }}{% endif %},
        {%- endfor %}
        {%- for base, previous in cfg.type3.items() %}
        case when chg._t6_has_history then chg._t6_latest.{{ q(base) }} end,
        {%- endfor %}
        {{ at }},
        {{ cfg.sentinel_sql }},
        true,
        cast(coalesce(chg._t6_max_version, 0) + 1 as int),
        chg._t6_reason,
        chg._t6_hash
    )
{% endmacro %}


{% macro _scd_type6_new_key(cfg, alias) %}
  {%- set expressions = [] -%}
  {%- for name in cfg.unique_key -%}{%- do expressions.append(historize._qualified(name, alias)) -%}{%- endfor -%}
  {%- do expressions.append(historize.load_timestamp_sql()) -%}
  {{ return(historize.hash_key(expressions)) }}
{% endmacro %}


{#- One audit row per key changed by this load; the MERGE inserts only rows
    not there yet, so a rerun of the load writes none. -#}
{% macro _scd_type6_audit_merge_sql(cfg, audit, changes, attributes, unchanged) %}
  {%- set keys = cfg.unique_key -%}
  {%- set q = adapter.quote -%}
  {%- set tracked = cfg.type1 + (attributes | reject('in', cfg.type0 + cfg.type1) | list) -%}
    merge into {{ audit }} as a
    using (
        select
            {%- for name in keys %}
            {{ q('_t6_key_' ~ loop.index0) }} as {{ q(name) }},
            {%- endfor %}
            _t6_current_key as {{ q(cfg.surrogate_key ~ '_old') }},
            case
                when _t6_type2_action in ('new', 'changed') then {{ historize._scd_type6_new_key(cfg, 'classified') }}
                when _t6_type2_action = 'deleted' then null
                else _t6_current_key
            end as {{ q(cfg.surrogate_key ~ '_new') }},
            change_type,
            changed_columns,
            map_filter(map_from_arrays(array({% for name in attributes %}'{{ name }}'{{ ', ' if not loop.last }}{% endfor %}),
                array({% for name in attributes %}cast(_t6_latest.{{ q(name) }} as string){{ ', ' if not loop.last }}{% endfor %})),
                (k, v) -> array_contains(changed_columns, k) and _t6_has_history) as old_values,
            map_filter(map_from_arrays(array({% for name in attributes %}'{{ name }}'{{ ', ' if not loop.last }}{% endfor %}),
                array({% for name in attributes %}cast({{ q(name) }} as string){{ ', ' if not loop.last }}{% endfor %})),
                (k, v) -> array_contains(changed_columns, k)) as new_values,
            {{ historize.load_timestamp_sql() }} as change_ts,
            '{{ cfg.actor | replace("'", "\\'") }}' as actor,
            case when _t6_type2_action = 'deleted' then 'deleted_in_source' else _t6_reason end as reason,
            {{ historize.load_run_id_sql() }} as source_batch_id
        from (
            select
                chg.*,
                case
                    when _t6_type2_action = 'deleted' then 'LOGICAL_DELETE'
                    when _t6_type2_action = 'new' then 'INSERT'
                    when _t6_type2_action = 'changed' then 'UPDATE'
                    else 'TYPE1_UPDATE'
                end as change_type,
                case
                    when _t6_type2_action = 'deleted' then cast(array() as array<string>)
                    when _t6_type2_action = 'new' and not _t6_has_history then array({% for name in attributes %}'{{ name }}'{{ ', ' if not loop.last }}{% endfor %})
                    else filter(array({% for name in tracked %}case when not (chg.{{ q(name) }} <=> chg._t6_latest.{{ q(name) }}) then '{{ name }}' end{{ ', ' if not loop.last }}{% endfor %}), c -> c is not null)
                end as changed_columns
            from {{ changes }} as chg
        ) as classified
        where {{ unchanged }}
    ) as r
    on {% for name in keys %}a.{{ q(name) }} = r.{{ q(name) }} and {% endfor -%}
        a.change_ts = r.change_ts and a.change_type = r.change_type
    when not matched then insert *
{% endmacro %}


{% macro _scd_type6_create_audit_sql(cfg, audit, types) %}
    create table {{ audit }} (
        {%- for name in cfg.unique_key %}
        {{ adapter.quote(name) }} {{ types[name] }},
        {%- endfor %}
        {{ adapter.quote(cfg.surrogate_key ~ '_old') }} string,
        {{ adapter.quote(cfg.surrogate_key ~ '_new') }} string,
        change_type string,
        changed_columns array<string>,
        old_values map<string, string>,
        new_values map<string, string>,
        change_ts timestamp,
        actor string,
        reason string,
        source_batch_id string
    )
    using delta
    tblproperties ('delta.appendOnly' = 'true', 'delta.columnMapping.mode' = 'name')
{% endmacro %}


{#- The audit table of a former name of the model (meta.former_names), when
    this model's audit does not exist yet: it is renamed along with the
    dimension. -#}
{% macro _scd_type6_former_audit(audit_relation) %}
  {%- set formers = historize._read_option('former_names', []) -%}
  {%- for former in ([formers] if formers is string else formers) -%}
    {%- set found = adapter.get_relation(database=audit_relation.database, schema=audit_relation.schema,
          identifier=former ~ '_audit') -%}
    {%- if found is not none -%}
      {{ return(found) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}
