{#- scd2_hist from change events (input='changes'). See docs/scd2_hist_changes.md.

    Each row of the select is an event: the key's full image after one change,
    ordered per key by sequence_by (a timestamp, then columns that break its
    ties); deleted_when marks a delete. The history is a function of the set
    of events the table has seen. Per key, at each instant the last of its
    events there (by the later entries of sequence_by) decides the key's
    state from that instant on: the image of an upsert, or no version after a
    delete. A version begins where the state becomes an image and ends where
    it changes again.

    So that a late event finds its place among the events already applied,
    the table remembers every event it has seen, those that changed nothing
    included: its events table, `<table>__historize_events`. A load

      1. checks its events (nothing is written when one is refused);
      2. appends them to the events table, pending;
      3. rebuilds the history of the keys with pending events from all their
         events, and writes the difference in one MERGE (one commit on the
         history table, guarded);
      4. marks the events it applied.

    A run killed after step 2 or 3 leaves its events pending: the next load of
    the model, a rerun or not, rebuilds their keys with its own. The same
    event twice is one event, so a rerun's events add nothing. -#}


{#- The path's writes before its main statement: the events checked (nothing
    is written when one is refused), the history table brought in line with
    the select, the events table created (or renamed from a former name's),
    the batch's events recorded pending. `load` gets `events`, `checked`
    (_scd2_hist_check_events), `pending_runs` (the runs whose events the load
    applies: those a killed run left pending, and its own) and, when it
    writes into an existing table, `read` (the version its MERGE guards
    against). -#}
{% macro _scd2_hist_events_prepare(load) %}
  {%- set cfg, columns, found, history = load.cfg, load.columns, load.found, load.history -%}
  {%- set events = historize._scd2_hist_events_tables(cfg, history) -%}
  {%- set table_sync = historize._plan_table_sync(cfg, found,
        historize._columns_named(load.select_columns, columns.business),
        [cfg.version_key] + cfg.technical_columns) if found.relation is not none else none -%}
  {%- set renamed = table_sync.plan.renamed | selectattr(1, 'in', columns.business) | list if table_sync else [] -%}
  {%- if renamed -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": with input 'changes', a column cannot "
        ~ "be renamed yet (" ~ renamed | map('join', ' to ') | join(', ') ~ "): the events already "
        ~ "applied hold its former name. Nothing was written") }}
  {%- endif -%}
  {%- if table_sync -%}
    {{ historize._scd2_hist_assert_timelines(cfg, table_sync.state) }}
  {%- endif -%}
  {%- set checked = historize._scd2_hist_check_events(cfg, load.relations.staged, events.seen, columns) -%}
  {%- if cfg.bitemporal and events.seen is not none -%}
    {{ historize._scd2_hist_check_recorded_at(cfg, found.relation, events.seen) }}
  {%- endif -%}
  {%- if table_sync and (table_sync.alters_table or table_sync.plan.rehash) -%}
    {{ historize._sync_history_table(cfg, found, history, table_sync, cfg.hash_column,
        hash_sql=historize.row_hash(columns.attributes), current_rows=historize._quote(cfg.valid_to) ~ ' is null') }}
  {%- endif -%}
  {%- if events.former -%}
    {{ historize._rename_table(events.former, events.relation, cfg.model_name) }}
  {%- elif events.seen is none -%}
    {%- call statement('create_events') -%}
      {{ historize._scd2_hist_create_events_sql(cfg, events.relation, load.select_columns) }}
    {%- endcall -%}
    {%- do adapter.cache_added(events.relation) -%}
  {%- endif -%}
  {%- if checked.unrecorded > 0 -%}
    {%- call statement('record_events') -%}
      {{ historize._scd2_hist_record_events_sql(cfg, load.relations.staged, events.relation, columns, checked.since) }}
    {%- endcall -%}
  {%- endif -%}
  {%- set pending_runs = checked.pending + ([historize.load_run_id()]
        if checked.unrecorded > 0 and historize.load_run_id() not in checked.pending else []) -%}
  {%- do load.update({'events': events, 'checked': checked, 'pending_runs': pending_runs}) -%}
  {%- if found.relation is not none and pending_runs -%}
    {%- do load.update({'read': historize._read_version(history)}) -%}
  {%- endif -%}
{% endmacro %}


{#- The main statement: a first load creates the table with the versions of
    every event recorded; a later one writes its pending keys' versions in
    one MERGE, guarded: continued from their open versions when the batch
    comes after every event applied, rebuilt from all their events otherwise
    (on a bitemporal table, their new belief, continued or rebuilt the same
    way); with no pending event there is nothing to write. -#}
{% macro _scd2_hist_events_sql(load) %}
  {%- set cfg, columns = load.cfg, load.columns -%}
  {%- if load.found.relation is none -%}
    {{ return(historize._create_history_table_sql(load.history, historize._history_properties(cfg),
        select_sql=historize._scd2_hist_versions_sql(cfg, load.events.relation, columns.business, columns.attributes),
        partition_by=cfg.partition_by)) }}
  {%- elif not load.pending_runs -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set guard = historize._unchanged_since(load.read, cfg, refuse_older=false) -%}
  {%- if cfg.bitemporal and load.checked.in_order -%}
    {{ return(historize._scd2_hist_beliefs_merge_sql(cfg, load.history, historize._scd2_hist_table_columns(cfg, columns.business),
        historize._scd2_hist_continued_beliefs_sql(cfg, load.history, load.events.relation, columns.business,
            columns.attributes, load.checked.unrecorded),
        guard)) }}
  {%- elif cfg.bitemporal -%}
    {{ return(historize._scd2_hist_beliefs_merge_sql(cfg, load.history, historize._scd2_hist_table_columns(cfg, columns.business),
        historize._scd2_hist_event_beliefs_sql(cfg, load.history, load.events.relation, columns.business, columns.attributes),
        guard)) }}
  {%- endif -%}
  {%- if load.checked.in_order -%}
    {{ return(historize._scd2_hist_events_continued_merge_sql(cfg, load.history, load.events.relation, columns.business,
        columns.attributes, guard, load.checked.unrecorded)) }}
  {%- endif -%}
  {{ return(historize._scd2_hist_events_rebuilt_merge_sql(cfg, load.history, load.events.relation, columns.business,
      columns.attributes, guard)) }}
{% endmacro %}


{#- The versions written by action (a first load's all new), then the events
    applied marked so. A bitemporal load's new versions are those it recorded,
    its changed ones those it superseded (its MERGE's inserts and updates). -#}
{% macro _scd2_hist_events_result(load, result) %}
  {%- set detail = 'versions recorded (new) and superseded (changed), from events' if load.cfg.bitemporal
        else 'versions, from events' -%}
  {%- if load.found.relation is none -%}
    {%- do adapter.cache_added(load.history) -%}
    {%- set created = run_query("select count(*) as versions from " ~ load.history).rows[0]["versions"] | int -%}
    {%- set loaded = {'new': created, 'changed': 0, 'deleted': 0, 'written': created, 'detail': detail} -%}
  {%- elif not load.pending_runs -%}
    {%- set loaded = {'new': 0, 'changed': 0, 'deleted': 0, 'written': 0, 'detail': detail} -%}
  {%- else -%}
    {%- set merged = historize._merge_result(result) -%}
    {%- set loaded = {'new': merged.inserted, 'changed': merged.updated, 'deleted': merged.deleted,
                      'written': merged.affected, 'detail': detail} -%}
  {%- endif -%}
  {%- if load.pending_runs -%}
    {%- call statement('mark_events_applied') -%}
      {{ historize._scd2_hist_mark_applied_sql(load.events.relation, load.pending_runs) }}
    {%- endcall -%}
  {%- endif -%}
  {{ return(loaded) }}
{% endmacro %}


{#- The events table of the history table `history`. -#}
{% macro _scd2_hist_events_relation(history) %}
  {{ return(api.Relation.create(database=history.database, schema=history.schema,
      identifier=history.identifier ~ '__historize_events', type='table')) }}
{% endmacro %}


{#- The events tables of a load: `relation` (the history table's), `seen` (the
    table holding the events seen so far: that one, or the events table of one
    of the model's former names, `former`, which the load renames along with
    the history table; none before the first load). -#}
{% macro _scd2_hist_events_tables(cfg, history) %}
  {%- set relation = historize._scd2_hist_events_relation(history) -%}
  {%- set seen = load_cached_relation(relation) -%}
  {%- set former = none -%}
  {%- for name in cfg.former_names if seen is none and former is none -%}
    {%- set former = adapter.get_relation(database=relation.database, schema=relation.schema,
          identifier=name ~ '__historize_events') -%}
    {%- if former is not none -%}
      {{ return({'relation': relation, 'seen': former, 'former': former}) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return({'relation': relation, 'seen': seen, 'former': none}) }}
{% endmacro %}


{#- The select's columns that say when and whether, not what: sequence_by's
    and those deleted_when reads. Checked: sequence_by names columns of the
    select, none of the key, the first a timestamp; deleted_when reads only
    columns of the select and its quotes and parentheses close. (The
    condition's validity as SQL is checked on the staged select, in
    _scd2_hist_check_events: Spark's planning error is then the refusal's
    reason; a syntax error is Spark's own, raised by that check.) -#}
{% macro _scd2_hist_event_columns(cfg, select_columns) %}
  {%- set name = cfg.model_name -%}
  {%- set select_names = select_columns | map(attribute='name') | map('lower') | list -%}
  {{ historize._assert_columns_present(cfg.sequence_by, select_names, 'sequence_by', name) }}
  {%- set keyed = cfg.sequence_by | select('in', cfg.unique_key) | list -%}
  {%- if keyed -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": sequence_by names " ~ keyed | join(', ')
        ~ " of the unique_key; it orders a key's events, so it needs columns of its own") }}
  {%- endif -%}
  {%- for column in select_columns if column.name | lower == cfg.sequence_by[0] and column.data_type | lower != 'timestamp' -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": sequence_by's first column " ~ cfg.sequence_by[0]
        ~ " is " ~ column.data_type ~ "; it must be a timestamp, where versions begin and end") }}
  {%- endfor -%}
  {%- set read = [] -%}
  {%- if cfg.deleted_when -%}
    {%- set re = modules.re -%}
    {%- set condition = cfg.deleted_when -%}
    {%- set refused = "historize: model " ~ name ~ ": deleted_when (" ~ condition ~ ") " -%}
    {#- String literals and quoted names out of the way, then its words. -#}
    {%- set text = re.sub("'(?:[^'\\\\]|\\\\.)*'|\"(?:[^\"\\\\]|\\\\.)*\"", " '' ", condition) -%}
    {%- set quoted = re.findall("`((?:[^`]|``)+)`", text) -%}
    {%- set text = re.sub("`(?:[^`]|``)+`", " _historize_quoted ", text) -%}
    {%- if text.count('(') != text.count(')') or "'" in text.replace("''", "") or '"' in text or '`' in text -%}
      {{ exceptions.raise_compiler_error(refused ~ "does not parse: a quote or a parenthesis is not closed") }}
    {%- endif -%}
    {%- set keywords = ['and', 'or', 'not', 'is', 'null', 'true', 'false', 'in', 'like', 'ilike', 'rlike', 'regexp',
          'between', 'case', 'when', 'then', 'else', 'end', 'cast', 'as', 'interval', 'distinct', 'exists', 'escape',
          'div', 'year', 'years', 'month', 'months', 'week', 'weeks', 'day', 'days', 'hour', 'hours', 'minute',
          'minutes', 'second', 'seconds', 'millisecond', 'milliseconds', 'microsecond', 'microseconds',
          '_historize_quoted'] -%}
    {%- set words = [] -%}
    {#- A word is a column unless it is a keyword, a function (before '('), a
        field (after '.'), a type (after 'as') or a typed literal's prefix
        (before a string). -#}
    {%- for found in re.finditer("(?<![.\\w])([A-Za-z_][A-Za-z0-9_]*)(?!\\s*\\()(?!\\s*'')", text) -%}
      {%- set before = text[:found.start()].rstrip().lower() -%}
      {%- if found.group(1) | lower not in keywords and not before.endswith(' as') and not before.endswith('(as') -%}
        {%- do words.append(found.group(1) | lower) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- for name in quoted -%}{%- do words.append(name.replace('``', '`') | lower) -%}{%- endfor -%}
    {%- set unknown = words | reject('in', select_names) | unique | list -%}
    {%- if unknown -%}
      {{ exceptions.raise_compiler_error(refused ~ "names " ~ unknown | join(', ') ~ ", which the select has no column of; "
          ~ "its columns are: " ~ select_names | join(', ')) }}
    {%- endif -%}
    {%- do read.extend(words) -%}
  {%- endif -%}
  {{ return((cfg.sequence_by + read) | unique | list) }}
{% endmacro %}


{#- An event's image, the key's attribute values after it, as JSON text (to
    timestamps' microseconds): what the events table keeps of it, and what
    tells two events apart. -#}
{% macro _scd2_hist_event_image(attributes, alias) %}
  {%- if not attributes -%}
    {{ return("'{}'") }}
  {%- endif -%}
  {%- set fields = [] -%}
  {%- for column in attributes -%}
    {%- do fields.append(historize._string_literal(column.name | lower) ~ ", " ~ historize._quote(column.name, alias)) -%}
  {%- endfor -%}
  {{ return("to_json(named_struct(" ~ fields | join(', ') ~ "), map('timestampFormat', "
      ~ "'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSSXXX', 'timestampNTZFormat', 'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSS'))") }}
{% endmacro %}


{#- The events of the staged select `staged`, as the events table keeps them:
    key, sequence, whether it is a delete, its image. -#}
{% macro _scd2_hist_staged_events_sql(cfg, staged, columns) %}
    select
        {{ historize._column_list(cfg.unique_key + cfg.sequence_by, 'src', lines=true) }},
        coalesce({% if cfg.deleted_when %}({{ cfg.deleted_when }}){% else %}false{% endif %}, false) as _historize_deleted,
        {{ historize._scd2_hist_event_image(columns.attributes, 'src') }} as _historize_image
    from {{ staged }} as src
{% endmacro %}


{#- Caches the staged select `staged` and checks its events before anything is written:
    deleted_when is a condition on it; no key and no sequence_by column is
    NULL; no two events have the same key and sequence with different images,
    in the select or against the events table `events` (none: it does not
    exist yet). An event can only repeat or contradict one at its own instant,
    so the events table is read from the batch's first instant on (Delta skips
    the files before it); a batch of no event is not checked, and only the
    pending runs are read of the events table. Returns {'unrecorded': how many of its events the
    events table does not hold yet, 'since': the batch's first instant as SQL,
    'pending': the load_run_id of every run whose events are pending,
    'in_order': whether the batch comes after every event recorded, none of
    them pending}. -#}
{% macro _scd2_hist_check_events(cfg, staged, events, columns) %}
  {%- set name = cfg.model_name -%}
  {%- if cfg.deleted_when -%}
    {{ historize._scd2_hist_check_deleted_when(cfg, staged) }}
  {%- endif -%}
  {#- The batch is read by the checks and the record: cached once (it may be a
      change feed, whose read costs). -#}
  {{ historize._cache_staged(staged) }}
  {%- set keys, sequence = cfg.unique_key, cfg.sequence_by -%}
  {%- set identity = keys + sequence -%}
  {%- set at = historize._quote(sequence[0]) -%}
  {#- The batch's first instant, and the runs whose events are pending. -#}
  {%- set order_query -%}
    select
        count(*) as event_rows,
        cast(min({{ at }}) as string) as first_event,
        {%- if events is not none %}
        (select to_json(collect_set(load_run_id)) from {{ events }} where not _historize_applied) as pending
        {%- else %}
        '[]' as pending
        {%- endif %}
    from {{ staged }}
  {%- endset -%}
  {%- set order = run_query(order_query).rows[0] -%}
  {%- set pending = fromjson(order['pending']) | sort -%}
  {%- if order['event_rows'] == 0 -%}
    {#- No event: nothing to check or record; the pending runs' events are applied. -#}
    {{ return({'unrecorded': 0, 'since': none, 'pending': pending, 'in_order': false}) }}
  {%- endif -%}
  {%- set since = "timestamp'" ~ order['first_event'] ~ "'" if order['first_event'] is not none else none -%}
  {%- set checked = run_query(historize._scd2_hist_events_checks_sql(cfg, staged, events, columns, since)).rows[0] -%}
  {%- if checked['null_key_rows'] > 0 -%}
    {{ exceptions.raise_compiler_error(historize._refusal('null_key', name, [checked['null_key_rows']], keys)) }}
  {%- endif -%}
  {%- if checked['null_sequence_rows'] > 0 -%}
    {{ exceptions.raise_compiler_error(historize._refusal('null_key', name, [checked['null_sequence_rows']], sequence,
        label='sequence_by')) }}
  {%- endif -%}
  {%- if checked['conflicts'] > 0 -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ name ~ ": " ~ checked['conflicts']
        ~ " event(s) of the same key and sequence (" ~ identity | join(', ') ~ ") have different images, in the select"
        ~ (" or against the events already applied" if events is not none and not cfg.bitemporal else "")
        ~ ", e.g. " ~ checked['conflict_examples']
        ~ "; the same event twice is one event, two events need two sequences. Nothing was written") }}
  {%- endif -%}
  {{ return({'unrecorded': checked['unrecorded'] | int, 'since': since, 'pending': pending,
             'in_order': checked['after_every_event'] and not pending}) }}
{% endmacro %}

{#- Fails the load when deleted_when is no condition on the staged select
    `staged`: Spark's planning error, from an EXPLAIN, is the refusal's reason. -#}
{% macro _scd2_hist_check_deleted_when(cfg, staged) %}
  {%- set plan = run_query("explain select coalesce((" ~ cfg.deleted_when ~ "), false) and true as deleted_when from " ~ staged) -%}
  {%- set lines = [] -%}
  {%- for row in plan.rows -%}{%- do lines.extend((row[0] | string).split('\n')) -%}{%- endfor -%}
  {%- if lines[0].startswith('Error occurred during query planning') -%}
    {%- set reason = (lines[1:] | join(' ')).split('SQLSTATE')[0].split(';')[0] | trim -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": deleted_when (" ~ cfg.deleted_when
        ~ ") is not a condition on the select's columns: " ~ reason) }}
  {%- endif -%}
{% endmacro %}


{#- One row of the checks of the batch `staged` against the events table
    `events` (none: it does not exist yet), read from `since`, the batch's
    first instant, on: its events, those with a NULL key or sequence, those the
    events table does not hold yet (`unrecorded`), the events of one key and
    sequence with different images (`conflicts`, the first five as
    `conflict_examples`), and whether the batch comes after every event
    recorded (`after_every_event`). -#}
{% macro _scd2_hist_events_checks_sql(cfg, staged, events, columns, since) %}
  {%- set keys, sequence = cfg.unique_key, cfg.sequence_by -%}
  {%- set identity = keys + sequence -%}
  {%- set at = historize._quote(sequence[0]) -%}
  {%- set any_null_key = historize._column_list(keys, suffix=' is null', separator=' or ') -%}
  {%- set any_null_sequence = historize._column_list(sequence, suffix=' is null', separator=' or ') -%}
  {%- set texts = [] -%}
  {%- for column in identity -%}{%- do texts.append('cast(' ~ historize._quote(column) ~ ' as string)') -%}{%- endfor -%}
    with batch as (
        {{ historize._scd2_hist_staged_events_sql(cfg, staged, columns) | indent(4) }}
    ),

    together as (
        select *
        from batch
        where not ({{ any_null_key }} or {{ any_null_sequence }})
        {%- if events is not none and not cfg.bitemporal %}
        union all
        select
            {{ historize._column_list(identity, 'seen', lines=true) }},
            seen._historize_deleted,
            seen._historize_image
        from {{ events }} as seen
        left semi join batch
            on {{ historize._key_join(identity, 'seen', 'batch') }}
        {%- if since %}
        where seen.{{ at }} >= {{ since }}
        {%- endif %}
        {%- endif %}
    ),

    conflicting as (
        select
            {{ historize._column_list(identity, lines=true) }}
        from together
        group by {{ historize._column_list(identity) }}
        having count(distinct _historize_deleted, _historize_image) > 1
    )

    select
        counted.*,
        conflicts.*,
        {%- if events is not none and since %}
        (select count(*) = 0 from {{ events }} where {{ at }} >= {{ since }}) as after_every_event
        {%- else %}
        true as after_every_event
        {%- endif %}
    from (
        select
            count(*) as event_rows,
            count_if({{ any_null_key }}) as null_key_rows,
            count_if({{ any_null_sequence }}) as null_sequence_rows,
            count_if(not recorded) as unrecorded
        from (
            select
                batch.*,
                {%- if events is not none and cfg.bitemporal %}
                exists (
                    select 1
                    from (
                        {{ historize._scd2_hist_believed_events_sql(cfg, events, since) | indent(16) }}
                    ) as seen
                    where {{ historize._scd2_hist_same_event('seen', 'batch', identity) }}
                ) as recorded
                {%- elif events is not none %}
                exists (
                    select 1
                    from {{ events }} as seen
                    where {{ historize._scd2_hist_same_event('seen', 'batch', identity) }}
                        {%- if since %}
                        and seen.{{ at }} >= {{ since }}
                        {%- endif %}
                ) as recorded
                {%- else %}
                false as recorded
                {%- endif %}
            from batch
        ) as batch
    ) as counted
    cross join (
        select
            count(*) as conflicts,
            concat_ws('; ', slice(array_sort(collect_list(
                concat('(', concat_ws(', ', {{ texts | join(', ') }}), ')'))), 1, 5)) as conflict_examples
        from conflicting
    ) as conflicts
{% endmacro %}



{#- The events believed of the events table `events` (bitemporal), from `since`
    (the batch's first instant as SQL; none: all) on: for each key and
    sequence, the image recorded last. -#}
{% macro _scd2_hist_believed_events_sql(cfg, events, since) %}
  {%- set identity = cfg.unique_key + cfg.sequence_by %}
    select
        {{ historize._column_list(identity, lines=true) }},
        _historize_deleted,
        _historize_image
    from (
        select
            seen.*,
            row_number() over (
                partition by {{ historize._column_list(identity, 'seen') }}
                order by seen.recorded_at desc, seen._historize_image desc
            ) as _historize_recorded_rank
        from {{ events }} as seen
        {%- if since %}
        where seen.{{ historize._quote(cfg.sequence_by[0]) }} >= {{ since }}
        {%- endif %}
    ) as recorded_events
    where _historize_recorded_rank = 1
{% endmacro %}


{#- The event `left` is the event `right`: the same key, sequence and image. -#}
{% macro _scd2_hist_same_event(left, right, identity) %}
  {{- return(historize._key_join(identity, left, right) ~ " and " ~ left ~ "._historize_deleted = " ~ right
      ~ "._historize_deleted and " ~ left ~ "._historize_image = " ~ right ~ "._historize_image") -}}
{% endmacro %}


{#- The events table, when it does not exist: the key and sequence_by columns
    in the select's types, then `_historize_deleted`, `_historize_image`,
    `_historize_applied` (false while pending), `load_run_id` and
    `recorded_at` (when the recording run started). -#}
{% macro _scd2_hist_create_events_sql(cfg, events, select_columns) %}
  {%- set table_types = [] -%}
  {%- for name in cfg.unique_key + cfg.sequence_by -%}
    {%- for column in select_columns if column.name | lower == name -%}{%- do table_types.append((name, column.data_type)) -%}{%- endfor -%}
  {%- endfor -%}
  {%- do table_types.extend([('_historize_deleted', 'boolean'), ('_historize_image', 'string'),
        ('_historize_applied', 'boolean'), ('load_run_id', 'string'), ('recorded_at', 'timestamp')]) -%}
  {{ historize._create_history_table_sql(events, {'delta.columnMapping.mode': 'name'}, columns=table_types, for_model=false) }}
{% endmacro %}


{#- Appends the select's events that the events table does not hold yet,
    pending (a rerun's are there already), at the run's recorded time; `since`,
    the batch's first instant, bounds what of the events table it reads. On a
    bitemporal table an event is held when it is the one believed for its key
    and sequence: another image there is a correction, recorded. -#}
{% macro _scd2_hist_record_events_sql(cfg, staged, events, columns, since) %}
    insert into {{ events }} (
        {{ historize._column_list(cfg.unique_key + cfg.sequence_by) }},
        _historize_deleted, _historize_image, _historize_applied, load_run_id, recorded_at
    )
    select distinct
        staged_events.*,
        false,
        {{ historize._string_literal(historize.load_run_id()) }},
        {{ historize.recorded_at_sql() }}
    from (
        {{ historize._scd2_hist_staged_events_sql(cfg, staged, columns) | indent(4) }}
    ) as staged_events
    left anti join (
        {%- if cfg.bitemporal %}
        {{ historize._scd2_hist_believed_events_sql(cfg, events, since) | indent(4) }}
        {%- else %}
        select *
        from {{ events }}
        where {{ historize._quote(cfg.sequence_by[0]) }} >= {{ since }}
        {%- endif %}
    ) as seen
        on {{ historize._scd2_hist_same_event('seen', 'staged_events', cfg.unique_key + cfg.sequence_by) }}
{% endmacro %}


{#- Marks the events of the runs `runs` applied. -#}
{% macro _scd2_hist_mark_applied_sql(events, runs) %}
    update {{ events }}
    set _historize_applied = true
    where not _historize_applied
        and load_run_id in ({% for run in runs %}{{ historize._string_literal(run) }}{{ ', ' if not loop.last }}{% endfor %})
{% endmacro %}


{#- The versions the events table's events give their keys, as the history
    table's rows (its columns, in order), written by this run: of every key,
    or of the keys in the relation `keys_of` (the keys with pending events);
    on a bitemporal table, their current belief, recorded by this run.
    With `continued_from` (the relation of those keys' open versions), this
    run's pending events come after every event applied: a key's history then
    continues from its open version, which stands for the events before them
    (its start, its image and how it began), and the table's other events and
    versions are not read; each row then says whether it is that open version
    (`_historize_continued`).
    Steps:
      key_events        the events of those keys
      distinct_events   the same event twice is one event; on a bitemporal
                        table, the image recorded last of each key and
                        sequence is the one believed (a correction replaces
                        the one before it)
      at_instant        each key's last event at each instant, by the later
                        entries of sequence_by
      states            its state there: the image's attributes and row_hash,
                        or no version (NULL) after a delete
      state_changes     the instants where the state differs from the one before
      versions          each state change to an image, until the next change -#}
{% macro _scd2_hist_versions_sql(cfg, events, business_columns, attributes, keys_of=none, continued_from=none) %}
  {%- set keys, q = cfg.unique_key, historize._quote -%}
  {%- set at = q(cfg.sequence_by[0]) -%}
  {%- set by_key = 'partition by ' ~ historize._column_list(keys) ~ ' order by _historize_at' -%}
  {%- set schema = [] -%}
  {%- for column in attributes -%}{%- do schema.append(q(column.name | lower) ~ ' ' ~ column.data_type) -%}{%- endfor -%}
    with key_events as (
        select
            {{ historize._column_list(keys + cfg.sequence_by, 'events', lines=true) }},
            events._historize_deleted,
            events._historize_image,
            {%- if cfg.bitemporal %}
            events.recorded_at as _historize_recorded_at,
            {%- endif %}
            cast(null as string) as _historize_began
        from {{ events }} as events
        {%- if continued_from %}
        where not events._historize_applied
            and events.load_run_id = {{ historize._string_literal(historize.load_run_id()) }}
        union all
        select
            {{ historize._column_list(keys, 'open_versions', lines=true) }},
            open_versions.{{ q(cfg.valid_from) }},
            {%- for name in cfg.sequence_by[1:] %}
            null,
            {%- endfor %}
            false,
            {{ historize._scd2_hist_event_image(attributes, 'open_versions') }},
            {%- if cfg.bitemporal %}
            open_versions.{{ q(cfg.recorded_at) }},
            {%- endif %}
            open_versions.{{ q(cfg.state) }}
        from {{ continued_from }} as open_versions
        {%- elif keys_of %}
        left semi join {{ keys_of }}
            on {{ historize._key_join(keys, 'events', keys_of) }}
        {%- endif %}
    ),

    distinct_events as (
        {%- if cfg.bitemporal %}
        select
            {{ historize._column_list(keys + cfg.sequence_by, lines=true) }},
            _historize_deleted,
            _historize_image,
            _historize_began
        from (
            select
                *,
                row_number() over (
                    partition by {{ historize._column_list(keys + cfg.sequence_by) }}
                    order by _historize_recorded_at desc, _historize_image desc
                ) as _historize_recorded_rank
            from key_events
        ) as recorded_events
        where _historize_recorded_rank = 1
        {%- else %}
        select distinct
            {{ historize._column_list(keys + cfg.sequence_by, lines=true) }},
            _historize_deleted,
            _historize_image,
            _historize_began
        from key_events
        {%- endif %}
    ),

    at_instant as (
        select
            {{ historize._column_list(keys, lines=true) }},
            {{ at }} as _historize_at,
            _historize_deleted,
            _historize_image,
            _historize_began,
            row_number() over (
                partition by {{ historize._column_list(keys) }}, {{ at }}
                order by {{ historize._column_list(cfg.sequence_by[1:] + ['_historize_deleted'], suffix=' desc') }}
            ) as _historize_rank
        from distinct_events
    ),

    states as (
        select
            {{ historize._column_list(keys, 'parsed', lines=true) }},
            parsed._historize_at,
            parsed._historize_began,
            {%- for column in attributes %}
            parsed._historize_parsed.{{ q(column.name | lower) }} as {{ q(column.name) }},
            {%- endfor %}
            case when parsed._historize_deleted then null else {{ historize.row_hash(attributes, 'parsed._historize_parsed') }} end
                as _historize_state
        from (
            select
                at_instant.*,
                {%- if attributes %}
                {#- the formats the images were written with; single quotes, as
                    every string here (a double-quoted one is an identifier under
                    spark.sql.ansi.doubleQuotedIdentifiers) #}
                from_json(at_instant._historize_image, {{ historize._string_literal(schema | join(', ')) }},
                    map('timestampFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSSXXX', -- noqa: CV10
                        'timestampNTZFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSS')) as _historize_parsed -- noqa: CV10
                {%- else %}
                cast(null as string) as _historize_parsed
                {%- endif %}
            from at_instant
            where at_instant._historize_rank = 1
        ) as parsed
    ),

    state_changes as (
        select *
        from (
            select
                *,
                lag(_historize_state) over ({{ by_key }}) as _historize_state_before
            from states
        ) as stepped
        where not (_historize_state <=> _historize_state_before)
    ),

    versions as (
        select
            *,
            lead(_historize_at) over ({{ by_key }}) as _historize_ended_at,
            lead(_historize_state) over ({{ by_key }}) as _historize_state_after
        from state_changes
    )

    {%- set identity = [] -%}
    {%- for name in keys -%}{%- do identity.append(q(name, 'versions')) -%}{%- endfor %}

    select
        {{ historize.hash_key(identity + ['versions._historize_at']
            + ([historize.recorded_at_sql()] if cfg.bitemporal else [])) }} as {{ q(cfg.version_key) }},
        {%- for name in business_columns %}
        versions.{{ q(name) }},
        {%- endfor %}
        versions._historize_state as {{ q(cfg.hash_column) }},
        versions._historize_at as {{ q(cfg.valid_from) }},
        versions._historize_ended_at as {{ q(cfg.valid_to) }},
        case
            when versions._historize_ended_at is null
                then coalesce(versions._historize_began,
                    case when versions._historize_state_before is null then 'new' else 'changed' end)
            when versions._historize_state_after is null then 'deleted'
            else 'changed'
        end as {{ q(cfg.state) }},
        {{ historize._string_literal(historize.load_run_id()) }} as {{ q(cfg.load_run_id) }},
        {{ historize._utc_literal(run_started_at) }} as {{ q(cfg.loaded_at) }}
        {%- if cfg.bitemporal %},
        {{ historize.recorded_at_sql() }} as {{ q(cfg.recorded_at) }},
        cast(null as timestamp) as {{ q(cfg.superseded_at) }}
        {%- endif %}
        {%- if continued_from %},
        versions._historize_began is not null as _historize_continued
        {%- endif %}
    from versions
    where versions._historize_state is not null
{% endmacro %}


{#- The MERGE of a batch in order (every pending event after every event
    applied, all of them the batch's `batch_events`): its keys' histories
    continue from their open versions (`open_versions`, read once), so a
    version the events give is new, or that open version, kept or now closed;
    only the open partition is read (_scd2_hist_pending_open_versions_sql) and
    written. The change set (`historize_changes`) states its bound, at its
    `limit`. Guarded by `guard` (_unchanged_since). -#}
{% macro _scd2_hist_events_continued_merge_sql(cfg, history, events, business_columns, attributes, guard, batch_events) %}
  {%- set keys, q = cfg.unique_key, historize._quote -%}
  {%- set key_names = historize._change_set_key_names(keys) -%}
  {%- set table_columns = historize._scd2_hist_table_columns(cfg, business_columns) %}
    merge into {{ history }} as hist
    using (
        with pending_keys as (
            {{ historize._scd2_hist_pending_keys_sql(cfg, events) | indent(8) }}
        ),

        open_versions as (
            {{ historize._scd2_hist_pending_open_versions_sql(cfg, history, batch_events) | indent(8) }}
        ),

        wanted as (
            {{ historize._scd2_hist_versions_sql(cfg, events, business_columns, attributes, keys_of='pending_keys',
                continued_from='open_versions') | indent(8) }}
        ),

        historize_changes as (
            select *
            from (
                select
                    {%- for name in keys %}
                    wanted.{{ q(name) }} as {{ q(key_names[loop.index0]) }},
                    {%- endfor %}
                    wanted.{{ q(cfg.valid_from) }} as _historize_started_at,
                    {%- for name in table_columns %}
                    wanted.{{ q(name) }},
                    {%- endfor %}
                    case
                        when not wanted._historize_continued then 'new'
                        when wanted.{{ q(cfg.valid_to) }} is null then 'unchanged'
                        else 'changed'
                    end as _historize_action
                from wanted
            ) as compared
            where _historize_action <> 'unchanged'
            {#- A bound its rows never reach (each of the batch's events begins at most
                one version, each key's open version is one more): it drops nothing, and
                tells Spark the change set is small, so that the MERGE's joins with the
                open partition broadcast it instead of shuffling that partition. #}
            limit {{ 2 * batch_events }}
        )

        {{ historize._guarded_rows_sql('historize_changes', guard) | trim | indent(4) }}
    ) as chg
    on {{ historize._key_join(keys, 'hist', 'chg', key_names) }}
        and {{ q(cfg.valid_from, 'hist') }} = chg._historize_started_at
        and {{ q(cfg.valid_to, 'hist') }} is null
    {{ historize._write_versions_by_action(table_columns, table_columns) }}
{% endmacro %}


{#- The MERGE of a batch with late events, or of events a killed run left
    pending: each pending key's versions (`wanted`, rebuilt from all its
    events) are compared with all of its versions in the table (`existing`),
    by key and start; `historize_changes` holds the difference: a version to
    insert (new), to rewrite (changed: another end, state or image) or to
    remove (deleted: a late event moved where it begins, or merged it into the
    version before). Guarded by `guard` (_unchanged_since). -#}
{% macro _scd2_hist_events_rebuilt_merge_sql(cfg, history, events, business_columns, attributes, guard) %}
  {%- set keys, q = cfg.unique_key, historize._quote -%}
  {%- set key_names = historize._change_set_key_names(keys) -%}
  {%- set table_columns = historize._scd2_hist_table_columns(cfg, business_columns) -%}
  {%- set compared = [cfg.hash_column, cfg.valid_to, cfg.state] %}
    merge into {{ history }} as hist
    using (
        with pending_keys as (
            {{ historize._scd2_hist_pending_keys_sql(cfg, events) | indent(8) }}
        ),

        wanted as (
            {{ historize._scd2_hist_versions_sql(cfg, events, business_columns, attributes, keys_of='pending_keys') | indent(8) }}
        ),

        existing as (
            select hist.*
            from {{ history }} as hist
            left semi join pending_keys
                on {{ historize._key_join(keys, 'hist', 'pending_keys') }}
        ),

        historize_changes as (
            select *
            from (
                select
                    {%- for name in keys %}
                    coalesce(wanted.{{ q(name) }}, existing.{{ q(name) }}) as {{ q(key_names[loop.index0]) }},
                    {%- endfor %}
                    coalesce(wanted.{{ q(cfg.valid_from) }}, existing.{{ q(cfg.valid_from) }}) as _historize_started_at,
                    {%- for name in table_columns %}
                    wanted.{{ q(name) }},
                    {%- endfor %}
                    case
                        when wanted.{{ q(cfg.valid_from) }} is null then 'deleted'
                        when existing.{{ q(cfg.valid_from) }} is null then 'new'
                        when {% for name in compared %}wanted.{{ q(name) }} <=> existing.{{ q(name) }}{{ ' and ' if not loop.last }}{% endfor %}
                            then 'unchanged'
                        else 'changed'
                    end as _historize_action
                from wanted
                full outer join existing
                    on {{ historize._key_join(keys, 'wanted', 'existing') }}
                        and wanted.{{ q(cfg.valid_from) }} = existing.{{ q(cfg.valid_from) }}
            ) as compared
            where _historize_action <> 'unchanged'
        )

        {{ historize._guarded_rows_sql('historize_changes', guard) | trim | indent(4) }}
    ) as chg
    on {{ historize._key_join(keys, 'hist', 'chg', key_names) }}
        and {{ q(cfg.valid_from, 'hist') }} = chg._historize_started_at
    {{ historize._write_versions_by_action(table_columns, table_columns) }}
{% endmacro %}


{#- The keys with pending events. -#}
{% macro _scd2_hist_pending_keys_sql(cfg, events) %}
    select distinct {{ historize._column_list(cfg.unique_key) }}
    from {{ events }}
    where not _historize_applied
{% endmacro %}


{#- The open versions of the keys with pending events (the CTE `pending_keys`);
    on a bitemporal table, those of the current belief. A batch of up to a
    million events (`batch_events`) broadcasts its keys to this read (a few
    megabytes), which then scans the open versions without shuffling them; a
    larger one leaves the join to Spark. -#}
{% macro _scd2_hist_pending_open_versions_sql(cfg, history, batch_events) %}
    select {% if batch_events <= 1000000 %}/*+ broadcast(pending_keys) */ {% endif %}hist.*
    from {{ history }} as hist
    left semi join pending_keys
        on {{ historize._key_join(cfg.unique_key, 'hist', 'pending_keys') }}
    where hist.{{ historize._quote(cfg.valid_to) }} is null
        {%- if cfg.bitemporal %}
        and hist.{{ historize._quote(cfg.superseded_at) }} is null
        {%- endif %}
{% endmacro %}
