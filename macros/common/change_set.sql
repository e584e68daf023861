{#- The change set and the plan, as every materialization computes them.

    The change set is a session view of the rows a load writes, each with
    `_historize_action` (see docs/how_a_load_runs.md, "Vocabulary"): new, changed, deleted,
    unchanged, invalid. It is cached once per run, so the plan and the writes
    read the same rows; lazily, so that the plan query computes it and
    counts it in one job.

    The plan is one row of counts of the change set by action, checked before
    anything is written: a load may not go back in time, and a rerun of a
    load_timestamp must see the same data. -#}

{#- Stages the model's select as a session view; returns its columns. -#}
{% macro _stage_select(view, select_sql) %}
  {{ historize._drop_session_view(view) }}
  {%- call statement('stage_' ~ view.identifier) -%}
    create or replace temporary view {{ view }} as
    {{ select_sql }}
  {%- endcall -%}
  {{ return(adapter.get_columns_in_relation(view)) }}
{% endmacro %}


{#- Caches `changes_sql` as the load's session view `relations.changes`, on
    its first read (the plan query's), and notes it among the views the load
    staged. A load that is its MERGE alone stages none. -#}
{% macro _stage_change_set(relations, changes_sql) %}
  {%- set view = relations.changes -%}
  {{ historize._drop_session_view(view) }}
  {%- call statement('stage_' ~ view.identifier) -%}
    cache lazy table {{ view }} as
    {{ changes_sql }}
  {%- endcall -%}
  {%- do relations.staged.append(view) -%}
{% endmacro %}


{#- Drops the load's session views (relations of _history_relations): the
    staged select and the change set, if it staged one. -#}
{% macro _drop_session_views(relations) %}
  {%- for view in relations.staged -%}
    {{ historize._drop_session_view(view) }}
  {%- endfor -%}
  {{ historize._drop_session_view(relations.source) }}
{% endmacro %}


{#- Drops a session view and its cached data, left over or done with. (DROP
    VIEW uncaches without resolving the view, which may name a dropped table.) -#}
{% macro _drop_session_view(relation) %}
  {%- call statement('drop_' ~ relation.identifier) -%}
    drop view if exists {{ relation }}
  {%- endcall -%}
{% endmacro %}


{#- Plan columns shared by the key-based materializations: keys whose
    `started_column` (when their current version began) is this very
    load_timestamp but that change again, i.e. a rerun over other data; the
    first five of them in sorted order, so the error is the same every run. -#}
{% macro _rerun_conflict_columns(key_count, started_column) %}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set conflict = "_historize_action in ('changed', 'deleted') and " ~ started_column ~ " = " ~ at -%}
  {%- set key_text = [] -%}
  {%- for index in range(key_count) -%}
    {%- do key_text.append('cast(' ~ historize._quote('_historize_key_' ~ index) ~ ' as string)') -%}
  {%- endfor -%}
            coalesce(sum(case when {{ conflict }} then 1 else 0 end), 0) as conflicts,
            concat_ws('; ', slice(array_sort(collect_list(case when {{ conflict }}
                then concat('(', concat_ws(', ', {{ key_text | join(', ') }}), ') ', _historize_action) end)), 1, 5)) as conflict_examples
{%- endmacro %}


{#- Counts of the change set by action, as plan columns. -#}
{% macro _action_count_columns(actions) %}
  {%- for action in actions %}
            coalesce(sum(case when _historize_action = '{{ action }}' then 1 else 0 end), 0) as {{ action }}{{ ',' if not loop.last }}
  {%- endfor %}
{%- endmacro %}


{#- The plan query: the columns of `counted_sql`, and whether load_timestamp
    is older than the newest instant already in the table, the one row and
    column `newest_timestamp` of `newest_sql`. -#}
{% macro _plan_with_newest_instant(counted_sql, newest_sql) %}
    {#- Subqueries, not CTEs: Spark does not substitute a cached view read
        inside a CTE, and would compute the change set again. -#}
    select
        with_newest.*,
        cast(with_newest.newest_timestamp as string) as newest_instant,
        coalesce(with_newest.newest_timestamp > {{ historize.load_timestamp_sql() }}, false) as load_is_older
    from (
        select
            counted.*,
            newest.newest_timestamp
        from (
            {{ counted_sql }}
        ) as counted
        cross join (
            {{ newest_sql }}
        ) as newest
    ) as with_newest
{% endmacro %}


{#- Fails a load whose plan (the plan query's row) goes back in time, or
    reruns a load_timestamp over other data (`conflicts` keys whose `what`
    began at that instant differ). -#}
{% macro _assert_plan_applicable(plan, cfg, history, what) %}
  {%- if plan['load_is_older'] -%}
    {%- set refusal = historize._older_load_message(cfg, history) -%}
    {{ exceptions.raise_compiler_error(refusal[0] ~ plan['newest_instant'] ~ refusal[1]) }}
  {%- endif -%}
  {%- if plan['conflicts'] > 0 -%}
    {%- set refusal = historize._rerun_conflict_message(cfg, what) -%}
    {{ exceptions.raise_compiler_error(refusal[0] ~ plan['conflicts'] ~ refusal[1] ~ plan['conflict_examples'] ~ refusal[2]) }}
  {%- endif -%}
{% endmacro %}


{#- The refusal of a rerun over other data, as the text around the number of
    conflicting keys and around their examples. -#}
{% macro _rerun_conflict_message(cfg, what) %}
  {{- return(["historize: model " ~ cfg.model_name ~ ": load_timestamp " ~ historize.load_timestamp()
      ~ " was already loaded with other data: ", " key(s) whose " ~ what ~ " began at this load_timestamp now differ, e.g. ",
      "; a rerun must see the same snapshot, a new snapshot needs a new load_timestamp. Nothing was written"]) -}}
{% endmacro %}


{#- Columns of the select's rows that carry the key check into the change
    set's own pass (the shuffle by key its join needs anyway): the select is
    read once. -#}
{% macro _keyed_source_columns(keys, alias) %}
            true as _historize_in_source,
            count(*) over (partition by {{ historize._column_list(keys, alias) }}) as _historize_occurrences
{%- endmacro %}


{#- True for a row of the select whose key is NULL or duplicated: its action
    is `invalid`, and the load fails on it before writing. -#}
{% macro _invalid_key_condition(keys, alias) %}
  {{- return(alias ~ '._historize_in_source and (' ~ historize._column_list(keys, alias, suffix=' is null', separator=' or ')
      ~ ' or ' ~ alias ~ '._historize_occurrences > 1)') -}}
{% endmacro %}


{#- Fails, naming the keys, when the plan counted `invalid` rows. -#}
{% macro _assert_valid_keys(plan, changes, cfg) %}
  {%- if plan['invalid'] > 0 -%}
    {{ historize._assert_unique_key("(select * from " ~ changes ~ " where _historize_action = 'invalid') as invalid_rows",
        cfg.unique_key, cfg.model_name) }}
  {%- endif -%}
{% endmacro %}
