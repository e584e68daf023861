{#- scd2_hist, path `merge`: a snapshot in time order, strategy 'merge'. The
    load is one MERGE that computes the change set, checks the load and writes
    it: the load's one read of the table's rows is its write's, so Delta's
    commit fails it if another run wrote the versions it read, and no version
    is read before it. -#}

{#- That MERGE, all four effects in one commit. Its source:
      historize_changes  the change set of the staged select (_scd2_hist_changes_sql),
                         a deleted key's row with its open version's columns
      historize_checks   one row whose `_historize_checked` is true, or raises the
                         first failing check's refusal before Delta writes anything
                         (_load_checks_sql, over _scd2_hist_instants_sql)
    then each change row once per role: `update` (it matches the key's open
    version), `insert` (the role is part of the join condition, so it never
    matches: it inserts the new version) and `closed_copy`. Every row joins on
    its own key, so Spark spreads the inserts over the MERGE's tasks by key (a
    NULL join key would send them all to one task, and one file). A
    changed key's `update` closes its open version in place; a deleted key's
    removes it, and its `closed_copy` inserts that version closed. So Delta's
    own counts of the MERGE tell each action apart: rows updated are the
    changed keys, rows deleted the deleted keys. A changed key with no open
    version (closed as changed at this load_timestamp by a run of strategy
    'ordered' that stopped) is closed again, its row matching that closed
    version. A row that would close an open version begun at this
    load_timestamp (a rerun over other data) raises the refusal naming its
    key, once the checks passed: the change set carries each key's open
    version, so that refusal reads no table of its own. -#}
{% macro _scd2_hist_merge_sql(load) %}
  {%- set cfg, history, business_columns = load.cfg, load.history, load.columns.business -%}
  {%- set valid_to = historize._quote(cfg.valid_to, 'hist') -%}
  {%- set key_names = historize._change_set_key_names(cfg.unique_key) -%}
  {%- set closing = [cfg.valid_to, cfg.state, cfg.load_run_id, cfg.loaded_at] -%}
  {%- set copied_columns = [cfg.version_key] + business_columns + load.retired_columns
        + cfg.technical_columns | reject('in', closing) | list -%}
  {%- set key_text = [] -%}
  {%- for name in key_names -%}
    {%- do key_text.append('cast(chg.' ~ historize._quote(name) ~ ' as string)') -%}
  {%- endfor %}
    merge into {{ history }} as hist
    using (
        with historize_changes as (
            {{ historize._scd2_hist_changes_sql(cfg, history, load.relations.staged, business_columns, scope_rows=false,
                open_version_columns=copied_columns) | indent(8) }}
        ),

        historize_checks as (
            {{ historize._load_checks_sql(cfg, load.relations.staged, history,
                historize._scd2_hist_instants_sql(cfg, history)) | indent(8) }}
        )

        select
            chg.*,
            roles._historize_role
        from historize_changes as chg
        cross join historize_checks
        lateral view explode(
            case
                when _historize_action = 'changed' then array('update', 'insert')
                when _historize_action = 'deleted' then array('update', 'closed_copy')
                else array('insert')
            end
        ) roles as _historize_role
        where
            case
                when chg._historize_action in ('changed', 'deleted') and chg._historize_open_started_at = {{ historize.load_timestamp_sql() }}
                    then raise_error({{ historize._refusal('rerun_conflict_key', cfg.model_name,
                        ["concat_ws(', ', " ~ key_text | join(', ') ~ ")", 'chg._historize_action'], what='version', sql=true) }})
                else historize_checks._historize_checked
            end
    ) as chg
    on {{ historize._key_join(cfg.unique_key, 'hist', 'chg', key_names) }}
        and chg._historize_role = 'update'
        and ({{ valid_to }} is null or {{ valid_to }} = {{ historize.load_timestamp_sql() }})
        and ({{ valid_to }} is null) = chg._historize_has_open
    when matched and chg._historize_action = 'changed' then update set
        {{ historize._scd2_hist_close_assignments(cfg, 'changed') | indent(4) }}
    when matched and chg._historize_action = 'deleted' then delete
    when not matched and chg._historize_role = 'insert' then insert (
        {{ historize._column_list(historize._scd2_hist_table_columns(cfg, business_columns)) }}
    ) values (
        {{ historize._scd2_hist_new_version_values(cfg, business_columns, 'chg', 'chg._historize_action') | join(',\n        ') }}
    )
    when not matched and chg._historize_role = 'closed_copy' then insert (
        {{ historize._column_list(copied_columns + closing) }}
    ) values (
        {%- for name in copied_columns %}
        chg._historize_open_version.{{ historize._quote(name) }},
        {%- endfor %}
        {{ historize.load_timestamp_sql() }},
        'deleted',
        {{ historize._string_literal(historize.load_run_id()) }},
        {{ historize._utc_literal(run_started_at) }}
    )
{% endmacro %}


{#- The keys by action from Delta's counts of that MERGE: each changed key
    updated one row and inserted one, each deleted key deleted one and
    inserted one, each new key inserted one. -#}
{% macro _scd2_hist_merge_result(load, result) %}
  {%- set merged = historize._merge_result(result) -%}
  {%- set changed, deleted = merged.updated, merged.deleted -%}
  {{ return({'new': merged.inserted - changed - deleted, 'changed': changed, 'deleted': deleted,
             'written': merged.inserted, 'detail': 'merge'}) }}
{% endmacro %}


{#- The instants of that MERGE's older-load check: the end of each version
    that ended after load_timestamp, the start of each open version (only
    these can be newer than load_timestamp), as _scd2_hist_newest_sql reads
    them. -#}
{% macro _scd2_hist_instants_sql(cfg, history) %}
  {%- set valid_to = historize._quote(cfg.valid_to, 'hist') -%}
    select coalesce({{ valid_to }}, {{ historize._quote(cfg.valid_from, 'hist') }}) as version_instant
    from {{ history }} as hist
    where {{ valid_to }} is null or {{ valid_to }} > {{ historize.load_timestamp_sql() }}
{% endmacro %}
