{#- The plan: one row of counts of a cached change set by action, checked
    before anything is written (_assert_plan, refusals.sql): a load may not go
    back in time, and a rerun of a load_timestamp must see the same data. A
    load that is its MERGE alone keeps the checks inside it and has no plan. -#}

{#- The plan query of a load that caches its change set `changes`: one row of
    its counts by action (invalid, new, changed, deleted), the kind's own
    `counted_sql` columns, the rerun conflicts (keys whose `started_column`,
    when their current version began, is this very load_timestamp but that
    change again: a rerun over other data; the first five of them in sorted
    order, so the error is the same every run), the rows in the guard's scope the change set
    read (`scope_rows`), and whether load_timestamp is older than the newest
    instant already in the table, the one row and column `newest_timestamp`
    of `newest_sql`. -#}
{% macro _plan_sql(cfg, changes, counted_sql, started_column, newest_sql) %}
  {%- set conflict = "_historize_action in ('changed', 'deleted') and " ~ started_column ~ " = " ~ historize.load_timestamp_sql() -%}
  {%- set key_text = [] -%}
  {%- for name in historize._change_set_key_names(cfg.unique_key) -%}
    {%- do key_text.append('cast(' ~ historize._quote(name) ~ ' as string)') -%}
  {%- endfor %}
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
            select
                {%- for action in ['invalid', 'new', 'changed', 'deleted'] %}
                coalesce(sum(case when _historize_action = '{{ action }}' then 1 else 0 end), 0) as {{ action }},
                {%- endfor %}
                {{ counted_sql | trim }},
                coalesce(sum(case when {{ conflict }} then 1 else 0 end), 0) as conflicts,
                concat_ws('; ', slice(array_sort(collect_list(case when {{ conflict }}
                    then concat('(', concat_ws(', ', {{ key_text | join(', ') }}), ') ', _historize_action) end)), 1, 5)) as conflict_examples,
                max(_historize_scope_rows) as scope_rows
            from {{ changes }}
        ) as counted
        cross join (
            {{ newest_sql }}
        ) as newest
    ) as with_newest
{% endmacro %}
