{#- scd2_hist, path `beliefs`: a snapshot into a bitemporal table (meta
    bitemporal: true), in time order, late, or at a load_timestamp already
    loaded (a restatement). See docs/bitemporal.md.

    The belief after a load is the history today's rules give from every
    snapshot recorded so far, in load_timestamp order, the one recorded last
    at each load_timestamp. The snapshots need not be kept: a key's row at a
    loaded instant is the version of the current belief in effect then, and
    the ledger (which `bitemporal` implies, as out_of_order 'reconcile') knows
    the instants loaded. So a load at `at` changes the belief only from `at`
    to the next load (`next`), and only for the keys whose row at `at` it
    changes (added, changed or gone). For each such key three sides decide
    the versions that replace the ones in effect around `at`:
      before_load   the version in effect just before `at` (it began before
                    it and ends at it or later)
      snapshot_row  the snapshot's row
      at_next       the version in effect at `next`
    Equal sides next to each other are one version (the same row_hash); a
    version ends where the next side differs, 'changed', or is absent,
    'deleted'. The versions before `before_load` and after `at_next` stay as they
    are, and so does every row of the belief that the new versions repeat. -#}

{#- The load's checks, before anything is written: the select's keys, and a
    recorded time that moves the table's forward. `load` gets `read`, the
    version its MERGE guards against (the current belief from load_timestamp
    on, which every load that could change what it reads writes). -#}
{% macro _scd2_hist_beliefs_prepare(load) %}
  {%- set cfg, history = load.cfg, load.history -%}
  {{ historize._assert_unique_key(load.relations.staged, cfg.unique_key, cfg.model_name) }}
  {{ historize._scd2_hist_check_recorded_at(cfg, history, none) }}
  {%- do load.update({'read': historize._read_version(history, historize._scd2_hist_beliefs_scope(cfg, 'guarded'))}) -%}
{% endmacro %}


{#- The rows of the table as `alias` a load can supersede: the current belief's
    versions that end at load_timestamp or later. -#}
{% macro _scd2_hist_beliefs_scope(cfg, alias) %}
  {%- set valid_to = historize._quote(cfg.valid_to, alias) -%}
  {{- return(historize._quote(cfg.superseded_at, alias) ~ ' is null and (' ~ valid_to ~ ' is null or ' ~ valid_to
      ~ ' >= ' ~ historize.load_timestamp_sql() ~ ')') -}}
{% endmacro %}


{#- The MERGE: the belief steps of a snapshot (below), written as every
    bitemporal load writes (_scd2_hist_beliefs_merge_sql). -#}
{% macro _scd2_hist_beliefs_sql(load) %}
  {%- set cfg, columns = load.cfg, load.columns -%}
  {{ return(historize._scd2_hist_beliefs_merge_sql(cfg, load.history,
      historize._scd2_hist_table_columns(cfg, columns.business) + load.retired_columns,
      historize._scd2_hist_snapshot_beliefs_sql(cfg, load.history, load.relations.staged, columns.business,
        load.retired_columns, load.timeline),
      historize._unchanged_since(load.read, cfg, refuse_older=false),
      scope=historize._scd2_hist_beliefs_scope(cfg, 'hist'))) }}
{% endmacro %}


{#- The versions recorded (new) and superseded (changed): the MERGE's inserts
    and updates. -#}
{% macro _scd2_hist_beliefs_result(load, result) %}
  {%- set merged = historize._merge_result(result) -%}
  {{ return({'new': merged.inserted, 'changed': merged.updated, 'deleted': 0, 'written': merged.affected,
             'detail': 'versions recorded (new) and superseded (changed)'}) }}
{% endmacro %}


{#- The belief steps of a snapshot at load_timestamp (`at`), the first load
    after it at `timeline.next` (none: there is none):
      at_load         the row_hash of each version in effect at `at` (a read
                      of the key and row_hash columns only)
      affected_keys   the keys whose row at `at` the snapshot changes
      believed        per key of those, the current belief's versions in
                      effect just before `at`, at `at` and at `next`
                      (structs, NULL where none): the table's whole rows, of
                      those keys only
      affected        those keys with their three sides (before_load,
                      snapshot_row, at_next), whether each is there and
                      whether neighbours are equal
      sides           with how `before_load` began
      ends            where the versions beginning with `before_load` and
                      with the snapshot's row end
      versions        per key, its believed versions (the ones the load may
                      replace) and the new versions of its sides
      by_start        per key and version start, the new version and the
                      believed one beside each other
      compared        the two compared (_scd2_hist_beliefs_merge_sql): per
                      key, with no join, so that `affected` and what it reads
                      are computed once (Spark computes a CTE again at each
                      read, and a join of two CTEs of `affected` reads it twice)
    At a load_timestamp loaded before, `before_load` may end at `at` and
    become open again; it then began as it did (`changed` if a version of the
    key closed as changed where it began), read from `opened_by_change`. At a
    new instant, `before_load` also spans `at`, so it stays apart from a row
    that differs from it and never opens again. -#}
{% macro _scd2_hist_snapshot_beliefs_sql(cfg, history, staged, business_columns, retired_columns, timeline) %}
  {%- set keys, q = cfg.unique_key, historize._quote -%}
  {%- set key_names = historize._change_set_key_names(keys) -%}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set next_at = "timestamp'" ~ timeline.next ~ "+00:00'" if timeline.next else none -%}
  {%- set no_end = 'cast(null as timestamp)' -%}
  {%- set table_columns = historize._scd2_hist_table_columns(cfg, business_columns) + retired_columns -%}
  {%- set valid_from, valid_to, hash = q(cfg.valid_from), q(cfg.valid_to), q(cfg.hash_column) -%}
  {%- set side_columns = {'before_load': business_columns + retired_columns, 'snapshot_row': business_columns,
        'at_next': business_columns + retired_columns} -%}
  {#- Each version's state: how it began while open, how it ended once closed. -#}
  {%- set state = q(cfg.state) -%}
  {%- set before_state -%}
case
    when ends.before_ended is null then ends.before_began
    when ends.before_is_row and ends.row_is_after then ends.at_next.{{ state }}
    when ends.before_is_row then case when ends.has_after then 'changed' else 'deleted' end
    when ends.has_row then 'changed'
    else 'deleted'
end
  {%- endset -%}
  {%- set row_state -%}
case
    when ends.row_ended is null then case when ends.has_before then 'changed' else 'new' end
    when ends.row_is_after then ends.at_next.{{ state }}
    when ends.has_after then 'changed'
    else 'deleted'
end
  {%- endset -%}
  {%- set after_state -%}
case
    when ends.at_next.{{ valid_to }} is null then case when ends.has_row then 'changed' else 'new' end
    else ends.at_next.{{ state }}
end
  {%- endset %}
        at_load as (
            select
                {{ historize._column_list(keys, 'hist', lines=true) }},
                hist.{{ hash }}
            from {{ history }} as hist
            where {{ historize._scd2_hist_beliefs_scope(cfg, 'hist') }}
                and hist.{{ valid_from }} <= {{ at }}
                and (hist.{{ valid_to }} is null or hist.{{ valid_to }} > {{ at }})
        ),

        affected_keys as (
            select {{ historize._change_set_keys(keys, 'src', 'at_load') }}
            from {{ staged }} as src
            full outer join at_load
                on {{ historize._key_join(keys, 'src', 'at_load') }}
            where not (src.{{ hash }} <=> at_load.{{ hash }})
        ),

        believed as (
            select
                {{ historize._column_list(key_names, 'affected_keys', lines=true) }},
                first(struct(hist.*)) filter (where hist.{{ valid_from }} < {{ at }}) as before_load,
                first(struct(hist.*)) filter (
                    where hist.{{ valid_from }} <= {{ at }} and (hist.{{ valid_to }} is null or hist.{{ valid_to }} > {{ at }})
                ) as at_load,
                first(struct(hist.*)) filter (
                    {%- if next_at %}
                    where hist.{{ valid_from }} <= {{ next_at }} and (hist.{{ valid_to }} is null or hist.{{ valid_to }} > {{ next_at }})
                    {%- else %}
                    where false
                    {%- endif %}
                ) as at_next
            from affected_keys
            left join {{ history }} as hist
                on {{ historize._key_join(key_names, 'affected_keys', 'hist', keys) }}
                    and {{ historize._scd2_hist_beliefs_scope(cfg, 'hist') }}
                    {%- if next_at %}
                    and hist.{{ valid_from }} <= {{ next_at }}
                    {%- endif %}
            group by {{ historize._column_list(key_names, 'affected_keys') }}
        ),

        affected as (
            select
                {{ historize._column_list(key_names, 'believed', lines=true) }},
                believed.before_load,
                struct(src.*) as snapshot_row,
                believed.at_load,
                believed.at_next,
                believed.before_load.{{ q(cfg.version_key) }} is not null as has_before,
                src.{{ q(keys[0]) }} is not null as has_row,
                believed.at_next.{{ q(cfg.version_key) }} is not null as has_after,
                coalesce(believed.before_load.{{ hash }} = src.{{ hash }}, false) as before_is_row,
                coalesce(src.{{ hash }} = believed.at_next.{{ hash }}, false) as row_is_after
            from believed
            left join {{ staged }} as src
                on {{ historize._key_join(key_names, 'believed', 'src', keys) }}
        ),

        {%- if timeline.known %}

        opened_by_change as (
            select distinct
                {{ historize._column_list(keys, 'hist') }},
                hist.{{ valid_to }} as _historize_closed_at
            from {{ history }} as hist
            left semi join affected_keys
                on {{ historize._key_join(keys, 'hist', 'affected_keys', key_names) }}
            where hist.{{ q(cfg.superseded_at) }} is null
                and hist.{{ valid_to }} < {{ at }}
                and hist.{{ q(cfg.state) }} = 'changed'
        ),
        {%- endif %}

        sides as (
            select
                affected.*,
                case
                    when affected.before_load.{{ valid_to }} is null then affected.before_load.{{ q(cfg.state) }}
                    {%- if timeline.known %}
                    when opened.{{ q(keys[0]) }} is not null then 'changed'
                    else 'new'
                    {%- endif %}
                end as before_began
            from affected
            {%- if timeline.known %}
            left join opened_by_change as opened
                on {{ historize._key_join(key_names, 'affected', 'opened', keys) }}
                    and affected.before_load.{{ valid_from }} = opened._historize_closed_at
            {%- endif %}
        ),

        ends as (
            select
                sides.*,
                case
                    when sides.before_is_row and sides.row_is_after then sides.at_next.{{ valid_to }}
                    when sides.before_is_row then {{ next_at or no_end }}
                    else {{ at }}
                end as before_ended,
                case when sides.row_is_after then sides.at_next.{{ valid_to }} else {{ next_at or no_end }} end as row_ended
            from sides
        ),

        versions as (
            select
                array_distinct(filter(
                    array(ends.before_load, ends.at_load, ends.at_next), version -> version is not null)) as believed_versions,
                filter(array(
                    {{ historize._scd2_hist_side_version(cfg, key_names, 'before_load', side_columns.before_load, retired_columns,
                        'ends.before_load.' ~ valid_from, 'ends.before_ended', before_state, 'ends.has_before') | indent(20) }},
                    {{ historize._scd2_hist_side_version(cfg, key_names, 'snapshot_row', side_columns.snapshot_row, retired_columns,
                        at, 'ends.row_ended', row_state, 'ends.has_row and not ends.before_is_row') | indent(20) }},
                    {{ historize._scd2_hist_side_version(cfg, key_names, 'at_next', side_columns.at_next, retired_columns,
                        next_at or no_end, 'ends.at_next.' ~ valid_to, after_state, 'ends.has_after and not ends.row_is_after') | indent(20) }}
                ), version -> version is not null) as new_versions
            from ends
        ),

        by_start as (
            select inline(transform(
                array_distinct(concat(
                    transform(versions.new_versions, version -> version.{{ valid_from }}),
                    transform(versions.believed_versions, version -> version.{{ valid_from }})
                )),
                started -> named_struct(
                    'new_version', get(filter(versions.new_versions, version -> version.{{ valid_from }} = started), 0),
                    'believed', get(filter(versions.believed_versions, version -> version.{{ valid_from }} = started), 0)
                )
            ))
            from versions
        ),

        compared as (
            select
                {%- for name in table_columns %}
                by_start.new_version.{{ q(name) }},
                {%- endfor %}
                by_start.believed.{{ q(cfg.version_key) }} as _historize_believed_key,
                case
                    when by_start.believed is null then 'recorded'
                    when by_start.new_version is null then 'superseded'
                    when {% for name in [cfg.hash_column, cfg.valid_to, cfg.state] %}by_start.new_version.{{ q(name) }} <=> by_start.believed.{{ q(name) }}{{ ' and ' if not loop.last }}{% endfor %}
                        then 'unchanged'
                    else 'replaced'
                end as _historize_comparison
            from by_start
        )
{% endmacro %}


{#- One side's version of a key of `ends`, as this run records it, or NULL
    where `kept` does not hold: a struct of the table's columns, its key and
    `columns` from the side's struct (the retired columns NULL where the side
    has none), the row_hash, the interval (`started`, `ended`) and `state`
    given as expressions. The three sides' versions are one array, which
    new_belief unnests: `ends` is read once. -#}
{% macro _scd2_hist_side_version(cfg, key_names, side, columns, retired_columns, started, ended, state, kept) %}
  {%- set q, text = historize._quote, historize._string_literal -%}
  {%- set identity = [] -%}
  {%- for name in key_names -%}{%- do identity.append(q(name, 'ends')) -%}{%- endfor -%}
case when {{ kept }} then named_struct(
    {{ text(cfg.version_key) }}, {{ historize.hash_key(identity + [started, historize.recorded_at_sql()]) }},
    {%- for name in columns %}
    {{ text(name) }}, ends.{{ side }}.{{ q(name) }},
    {%- endfor %}
    {%- for name in retired_columns if name not in columns %}
    {{ text(name) }}, null,
    {%- endfor %}
    {{ text(cfg.hash_column) }}, ends.{{ side }}.{{ q(cfg.hash_column) }},
    {{ text(cfg.valid_from) }}, {{ started }},
    {{ text(cfg.valid_to) }}, {{ ended }},
    {{ text(cfg.state) }}, {{ state | indent(4) }},
    {{ text(cfg.load_run_id) }}, {{ text(historize.load_run_id()) }},
    {{ text(cfg.loaded_at) }}, {{ historize._utc_literal(run_started_at) }},
    {{ text(cfg.recorded_at) }}, {{ historize.recorded_at_sql() }},
    {{ text(cfg.superseded_at) }}, cast(null as timestamp)
) end
{%- endmacro %}
