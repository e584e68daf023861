{#- One MERGE that both updates a key's existing rows and inserts its new
    version: each change row is exploded into a row per role, `update` (its
    merge key is the key, so it matches the existing rows) and `insert` (its
    merge key is NULL, which never matches, so it inserts). -#}

{#- The MERGE's source: `changes` with `_historize_role` and the merge key
    columns `_historize_merge_key_<i>`. `roles_sql` gives each row its roles
    (an array of 'update' and 'insert'); `guard` (_unchanged_since) checks
    that no other run wrote the table since this run read it, and may define
    `changes` itself (its `with`: _guard_with_checks). -#}
{% macro _split_merge_source(changes, key_count, roles_sql, guard) %}
        {{ guard.get('with', '') | trim }}
        select
            {%- for index in range(key_count) %}
            case when roles._historize_role = 'update' then chg.{{ historize._quote('_historize_key_' ~ index) }} end
                as {{ historize._quote('_historize_merge_key_' ~ index) }},
            {%- endfor %}
            chg.*,
            roles._historize_role
        from {{ changes }} as chg
        {{ guard.join }}
        lateral view explode({{ roles_sql }}) roles as _historize_role
        where {{ guard.predicate }}
{% endmacro %}


{#- The MERGE's key condition: the table's key columns equal the merge keys. -#}
{% macro _split_merge_condition(keys, target_alias, source_alias) %}
  {%- set parts = [] -%}
  {%- for name in keys -%}
    {%- do parts.append(historize._qualified(name, target_alias) ~ ' = '
        ~ historize._qualified('_historize_merge_key_' ~ loop.index0, source_alias)) -%}
  {%- endfor -%}
  {{- return(parts | join(' and ')) -}}
{% endmacro %}


{#- The head of a split MERGE into `target` (alias `hist`) from `changes`
    (alias `chg`), up to its key condition; the caller adds any further
    condition and the when-clauses. -#}
{% macro _split_merge_into(history, changes, keys, roles_sql, guard) %}
    merge into {{ history }} as hist
    using (
        {{ historize._split_merge_source(changes, keys | length, roles_sql, guard) }}
    ) as chg
    on {{ historize._split_merge_condition(keys, 'hist', 'chg') }}
{%- endmacro %}


{#- The head of a MERGE into `target` (alias `hist`) from the change set
    `changes` as it is (alias `chg`), guarded (the guard may define `changes`
    itself: its `with`); the caller adds the key condition and the
    when-clauses. -#}
{% macro _guarded_merge_into(history, changes, guard) %}
    merge into {{ history }} as hist
    using (
        {%- if guard.get('with') %}
        {{ guard['with'] | trim }}
        {%- endif %}
        select chg.*
        from {{ changes }} as chg
        {{ guard.join }}
        where {{ guard.predicate }}
    ) as chg
{%- endmacro %}
