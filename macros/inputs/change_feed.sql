{#- The changes of a Delta table with its Change Data Feed on, as events for a
    model of scd2_hist with input='changes' (docs/scd2_hist_changes.md):

        {{ config(materialized='scd2_hist', unique_key='id', input='changes',
                  sequence_by=['_commit_timestamp', '_commit_version', '_change_order'],
                  deleted_when="_change_type = 'delete'") }}
        select * from {{ historize.change_feed(source('erp', 'customers')) }}

    Every column of the table, then `_change_type` (insert, update_postimage,
    delete: Delta's pre-images are dropped), `_commit_version`,
    `_commit_timestamp` and `_change_order` (a delete before an insert of the
    same key in one commit). It reads the versions after the last one the
    model's events table records (the recording is the load's, so a run killed
    before it reads them again); the first load, and a load run with
    --vars '{change_feed_snapshot: true}', read the table as it is at its
    current version: every row an insert, and a delete for every key the
    history holds open that the table no longer has. -#}
{% macro change_feed(relation) %}
  {%- set columns = adapter.get_columns_in_relation(relation) if execute else [] -%}
  {%- set feed_columns = "cast(null as string) as _change_type, cast(null as bigint) as _commit_version, "
      ~ "cast(null as timestamp) as _commit_timestamp, cast(null as int) as _change_order" -%}
  {%- if not execute -%}
    {{ return("(select *, " ~ feed_columns ~ " from " ~ relation ~ " where false) as change_feed") }}
  {%- endif -%}
  {%- set refused = "historize: model " ~ model.name ~ ": change_feed(" ~ relation ~ "): " -%}
  {%- set enabled = run_query("show tblproperties " ~ relation ~ " ('delta.enableChangeDataFeed')") -%}
  {%- if (enabled.rows[0][1] | string | lower) != 'true' -%}
    {{ exceptions.raise_compiler_error(refused ~ relation ~ " does not have the table property "
        ~ "delta.enableChangeDataFeed = true; set it (alter table " ~ relation ~ " set tblproperties "
        ~ "('delta.enableChangeDataFeed' = 'true')), then load the table once as a snapshot: "
        ~ "--vars '{change_feed_snapshot: true}'") }}
  {%- endif -%}
  {%- set log = run_query("describe history " ~ relation) -%}
  {%- set versions = log.columns['version'].values() | map('int') | list -%}
  {%- set current, oldest = versions | max, versions | min -%}
  {%- set history = this.incorporate(type='table') -%}
  {%- set events = historize._scd2_hist_events_relation(history) -%}
  {%- set consumed = none -%}
  {%- if load_cached_relation(events) is not none -%}
    {%- set consumed = run_query("select max(_commit_version) from " ~ events).rows[0][0] -%}
  {%- endif -%}
  {%- set names = columns | map(attribute='name') | list -%}
  {%- set listed = historize._column_list(names, 'feed') -%}
  {%- if consumed is none or var('change_feed_snapshot', false) -%}
    {{ return(historize._change_feed_snapshot_sql(relation, history, names, current,
        log.columns['timestamp'].values()[versions.index(current)])) }}
  {%- endif -%}
  {%- if consumed | int >= current -%}
    {{ return("(select *, " ~ feed_columns ~ " from " ~ relation ~ " where false) as change_feed") }}
  {%- endif -%}
  {%- if consumed | int + 1 < oldest -%}
    {{ exceptions.raise_compiler_error(refused ~ "versions " ~ (consumed | int + 1) ~ " to " ~ current ~ " of "
        ~ relation ~ " are not all readable any more (its log starts at version " ~ oldest ~ "), so the changes "
        ~ "since version " ~ consumed ~ ", which this model consumed last, are lost; load the table once as a "
        ~ "snapshot: --vars '{change_feed_snapshot: true}'") }}
  {%- endif -%}
  {%- set changes_sql -%}
    (
        select
            {{ listed }},
            feed._change_type,
            feed._commit_version,
            feed._commit_timestamp,
            case when feed._change_type = 'delete' then 0 else 1 end as _change_order
        from table_changes({{ historize._string_literal(relation | string) }}, {{ consumed | int + 1 }}, {{ current }}) as feed
        where feed._change_type <> 'update_preimage'
    ) as change_feed
  {%- endset -%}
  {{ return(changes_sql) }}
{% endmacro %}

{#- The table `relation` as it is at version `current` (committed at `at`), as
    the feed of a snapshot: each row an insert, and a delete for each key whose
    open version in the history table `history` is gone from it. `names`: the
    table's columns. -#}
{% macro _change_feed_snapshot_sql(relation, history, names, current, at) %}
  {%- set listed = historize._column_list(names, 'feed') -%}
  {%- set at_sql = historize._utc_literal(at) -%}
  {%- set keys = historize._as_name_list('unique_key', config.get('unique_key')) -%}
  {%- set history_found = load_cached_relation(history) -%}
  {%- set history_names = adapter.get_columns_in_relation(history) | map(attribute='name') | map('lower') | list
        if history_found is not none else [] -%}
  (
      select
          {{ listed }},
          'insert' as _change_type,
          cast({{ current }} as bigint) as _commit_version,
          {{ at_sql }} as _commit_timestamp,
          1 as _change_order
      from {{ relation }} version as of {{ current }} as feed
      {%- if history_found is not none %}
      union all
      select
          {%- for name in names %}
          {% if name | lower in history_names %}gone.{{ historize._quote(name) }}{% else %}null{% endif %},
          {%- endfor %}
          'delete',
          cast({{ current }} as bigint),
          {{ at_sql }},
          0
      from {{ history }} as gone
      where gone.`version_ended_at` is null
          and not exists (
              select 1
              from {{ relation }} version as of {{ current }} as feed
              where {{ historize._key_join(keys, 'feed', 'gone') }}
          )
      {%- endif %}
  ) as change_feed
{% endmacro %}
