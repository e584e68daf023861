{#- SCD Type 2 history (`_hist`) table kept from a current snapshot, or from change
    events (input='changes'). See docs/scd2_hist.md, docs/scd2_hist_changes.md and
    docs/how_a_load_runs.md. -#}
{% materialization scd2_hist, adapter='spark' %}
  {%- set cfg = historize._scd2_hist_config() -%}

  {#- A table that does not exist yet may be a renamed history table (from a `_hist` name). -#}
  {%- set relations = historize._history_relations(cfg, '_hist') -%}
  {%- set target_relation, existing_relation, staged_view, changes_view, found = relations.history, relations.existing,
        relations.staged, relations.changes, relations.found -%}

  {{ run_hooks(pre_hooks) }}

  {#- The record of every load, which a late load needs. -#}
  {%- set ledger = historize._load_ledger(target_relation) if cfg.out_of_order == 'reconcile' else none -%}

  {#- The select as a view; its columns decide the attributes. -#}
  {%- set select_columns = historize._stage_select(staged_view, sql) -%}
  {%- set columns = historize._scd2_hist_columns(cfg, select_columns) -%}

  {#- What the load did, in the same shape for every materialization: counts of keys
      (versions, from events) by action, the keys written (`written`) and a detail
      (_report_load). -#}
  {%- if cfg.input == 'changes' -%}
    {#- Events (_scd2_hist_events.sql): checked, remembered as pending, written in one
        MERGE (their keys' histories continued, or rebuilt from all their events when
        one comes late), then marked applied. -#}
    {%- set events = historize._scd2_hist_events_tables(cfg, target_relation) -%}
    {%- set events_relation = events.relation -%}
    {%- set changes = historize._history_table_changes(cfg, found, historize._columns_named(select_columns, columns.business),
          [cfg.version_key] + cfg.technical_columns) if found.relation is not none else none -%}
    {%- set renamed = changes.plan.renamed | selectattr(1, 'in', columns.business) | list if changes else [] -%}
    {%- if renamed -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": with input 'changes', a column cannot "
          ~ "be renamed yet (" ~ renamed | map('join', ' to ') | join(', ') ~ "): the events already "
          ~ "applied hold its former name. Nothing was written") }}
    {%- endif -%}
    {%- set checked = historize._scd2_hist_check_events(cfg, staged_view, events.seen, columns) -%}
    {%- if changes and (changes.changes_table or changes.plan.rehash) -%}
      {{ historize._sync_history_table(cfg, found, target_relation, changes, cfg.hash_column,
          hash_sql=historize.row_hash(columns.attributes)) }}
    {%- endif -%}
    {%- if events.former -%}
      {{ historize._rename_table(events.former, events_relation, cfg.model_name) }}
    {%- elif events.seen is none -%}
      {%- call statement('create_events') -%}
        {{ historize._scd2_hist_create_events_sql(cfg, events_relation, select_columns) }}
      {%- endcall -%}
      {%- do adapter.cache_added(events_relation) -%}
    {%- endif -%}
    {%- if checked.unrecorded > 0 -%}
      {%- call statement('record_events') -%}
        {{ historize._scd2_hist_record_events_sql(cfg, staged_view, events_relation, columns, checked.since) }}
      {%- endcall -%}
    {%- endif -%}
    {#- The runs whose events the load applies: those a killed run left pending, and its own. -#}
    {%- set pending_runs = checked.pending + ([historize.load_run_id()]
          if checked.unrecorded > 0 and historize.load_run_id() not in checked.pending else []) -%}
    {%- if found.relation is none -%}
      {#- The first load creates the table with the versions of every event remembered. -#}
      {%- call statement('main') -%}
        {{ historize._create_history_table_sql(target_relation, historize._history_properties(cfg),
            select_sql=historize._scd2_hist_versions_sql(cfg, events_relation, columns.business, columns.attributes),
            partition_by=cfg.partition_by) }}
      {%- endcall -%}
      {%- do adapter.cache_added(target_relation) -%}
      {%- set created = run_query("select count(*) as versions from " ~ target_relation).rows[0]["versions"] | int -%}
      {%- set load = {'new': created, 'changed': 0, 'deleted': 0, 'written': created, 'detail': 'versions, from events'} -%}
    {%- elif not pending_runs -%}
      {%- call noop_statement('main', 'nothing to write', 'nothing to write', 0) -%}{%- endcall -%}
      {%- set load = {'new': 0, 'changed': 0, 'deleted': 0, 'written': 0, 'detail': 'versions, from events'} -%}
    {%- else -%}
      {#- The write fails if another run writes the table after this read. A batch after
          every event applied continues its keys' open versions. -#}
      {%- set read = historize._read_version(target_relation) -%}
      {{ historize._write_per_task(cfg, true) }}
      {%- call statement('main', fetch_result=true) -%}
        {{ historize._scd2_hist_events_merge_sql(cfg, target_relation, events_relation, columns.business,
            columns.attributes, historize._unchanged_since(read, cfg, refuse_older=false),
            continued=checked.in_order, batch_events=checked.unrecorded) }}
      {%- endcall -%}
      {{ historize._write_per_task(cfg, false) }}
      {%- set merged = historize._merge_result(load_result('main')) -%}
      {%- set load = {'new': merged.inserted, 'changed': merged.updated, 'deleted': merged.deleted,
                      'written': merged.affected, 'detail': 'versions, from events'} -%}
    {%- endif -%}
    {%- if pending_runs -%}
      {%- call statement('mark_events_applied') -%}
        {{ historize._scd2_hist_mark_applied_sql(events_relation, pending_runs) }}
      {%- endcall -%}
    {%- endif -%}
  {%- else -%}
    {#- A snapshot: the select's row_hash staged with it. -#}
    {%- call statement('stage_source') -%}
      create or replace temporary view {{ staged_view }} as
      select
          src.*{% if not columns.has_row_hash %},
          {{ historize.row_hash(columns.attributes, 'src') }} as {{ historize._quote(cfg.hash_column) }}{% endif %}
      from (
          {{ sql }}
      ) as src
    {%- endcall -%}

    {%- if found.relation is none and cfg.adopt_from -%}
      {#- The first load of a model with adopt_from takes over the snapshot's versions, checked
          before anything is written (_scd2_hist_adopt.sql); the load then goes on, on that table. -#}
      {%- set adoption = historize._scd2_hist_adoption(cfg, target_relation, select_columns, columns.business) -%}
      {%- set adopted_rows_sql = historize._scd2_hist_adoption_sql(cfg, adoption, columns.attributes) -%}
      {{ historize._adopt(cfg, target_relation, adoption, adopted_rows_sql,
          historize._scd2_hist_adopted_versions_sql(cfg, adopted_rows_sql, columns.business), partition_by=cfg.partition_by) }}
      {%- set found = {'relation': target_relation, 'former': none} -%}
    {%- endif -%}
    {%- if found.relation is none -%}
      {#- The first load creates the table with every row of the select as a new open version. -#}
      {{ historize._assert_unique_key(staged_view, cfg.unique_key, cfg.model_name) }}
      {%- set table_columns = historize._scd2_hist_table_columns(cfg, columns.business) -%}
      {%- set first_load_sql -%}
      select
      {%- for value in historize._scd2_hist_new_version_values(cfg, columns.business, 'src', "'new'") %}
          {{ value }} as {{ historize._quote(table_columns[loop.index0]) }}{{ ',' if not loop.last }}
      {%- endfor %}
      from {{ staged_view }} as src
      {%- endset -%}
      {%- call statement('main') -%}
        {{ historize._create_history_table_sql(target_relation, historize._history_properties(cfg),
            select_sql=first_load_sql, partition_by=cfg.partition_by) }}
      {%- endcall -%}
      {%- do adapter.cache_added(target_relation) -%}
      {%- set created = run_query("select count(*) as created_keys from " ~ target_relation).rows[0]["created_keys"] | int -%}
      {%- set load = {'new': created, 'changed': 0, 'deleted': 0, 'written': created, 'detail': 'created ' ~ target_relation} -%}
    {%- else -%}
      {%- set changes = historize._history_table_changes(cfg, found,
            historize._columns_named(select_columns, columns.business), [cfg.version_key] + cfg.technical_columns,
            computes_hash=not columns.has_row_hash) -%}
      {#- Keys are checked with the change set below (one read of the select),
          unless the table must change first. -#}
      {%- if changes.changes_table -%}
        {{ historize._assert_unique_key(staged_view, cfg.unique_key, cfg.model_name) }}
      {%- endif -%}
      {%- if changes.changes_table or changes.plan.rehash -%}
        {{ historize._sync_history_table(cfg, found, target_relation, changes, cfg.hash_column,
            hash_sql=none if columns.has_row_hash else historize.row_hash(columns.attributes)) }}
      {%- endif -%}

      {#- With out_of_order='reconcile', a load before the newest one is applied where it belongs. -#}
      {%- set timeline = historize._load_timeline(cfg, target_relation, ledger) if ledger else none -%}
      {%- if timeline and timeline.newest and timeline.newest > historize.load_timestamp() -%}
        {#- Its change set cached and checked (_scd2_hist_reconcile.sql), then one MERGE guarded
            over the versions it may touch, whose rows in scope may begin after it: the guard's
            error is then the conflict, not the refusal of an older load. -#}
        {%- set late = historize._scd2_hist_late_change_set(cfg, target_relation, relations, columns.business, timeline) -%}
        {%- if late.plan.writes == 0 -%}
          {%- call noop_statement('main', 'nothing to write', 'nothing to write', 0) -%}{%- endcall -%}
        {%- else -%}
          {{ historize._write_per_task(cfg, true) }}
          {%- call statement('main') -%}
            {{ historize._scd2_hist_reconcile_merge_sql(cfg, target_relation, changes_view, columns.business,
                historize._unchanged_since(late.read, cfg, refuse_older=false)) }}
          {%- endcall -%}
          {{ historize._write_per_task(cfg, false) }}
        {%- endif -%}
        {%- set load = {'new': late.plan.new, 'changed': late.plan.changed, 'deleted': late.plan.deleted,
                        'written': late.plan.new + late.plan.changed + late.plan.deleted, 'detail': 'late, before ' ~ timeline.next} -%}
      {%- elif cfg.strategy == 'merge' -%}
        {#- One MERGE computes the change set, checks the load and writes it: the load's one
            read of the table's rows is its write's, so Delta's commit fails it if another run
            wrote the versions it read, and no version is read before it. -#}
        {{ historize._write_per_task(cfg, true) }}
        {%- call statement('main', fetch_result=true) -%}
          {{ historize._scd2_hist_checked_merge_sql(cfg, target_relation, staged_view, columns.business) }}
        {%- endcall -%}
        {{ historize._write_per_task(cfg, false) }}
        {#- Its counts from Delta's result: each changed key updated one row and inserted one,
            each new key inserted one, each deleted key updated one; when it did both, how many
            keys were deleted is read from its commit (_scd2_hist_merged_deletes). -#}
        {%- set merged = historize._merge_result(load_result('main')) -%}
        {%- set deleted = historize._scd2_hist_merged_deletes(cfg, target_relation, merged)
              if merged.updated > 0 and merged.inserted > 0 else merged.updated -%}
        {%- set changed = merged.updated - deleted -%}
        {%- set load = {'new': merged.inserted - changed, 'changed': changed, 'deleted': deleted,
                        'written': merged.inserted + deleted, 'detail': 'merge'} -%}
      {%- else -%}
        {#- Strategy 'ordered': the change set cached at the version read, the plan, then the steps. -#}
        {%- set read = historize._read_version(target_relation, historize._guard_scope(cfg, 'guarded'), counted=false) -%}
        {{ historize._stage_change_set(relations,
            historize._scd2_hist_changes_sql(cfg, read.snapshot, staged_view, columns.business)) }}
        {#- The plan query counts the change set by action, and fails on NULL or duplicate
            keys (found by the change set's own pass), a load older than the table, or a
            rerun over other data. -#}
        {%- set plan = run_query(historize._scd2_hist_plan_sql(cfg, target_relation, changes_view)).rows[0] -%}
        {{ historize._assert_plan(plan, cfg, target_relation, changes_view, 'version') }}
        {%- set load = {'new': plan['new'] | int, 'changed': plan['changed'] | int, 'deleted': plan['deleted'] | int,
                        'written': (plan['new'] + plan['changed'] + plan['deleted']) | int, 'detail': 'ordered'} -%}
        {%- if load.written == 0 -%}
          {#- dbt requires a 'main' result: no statement, no commit (_report_load says why) -#}
          {%- call noop_statement('main', 'nothing to write', 'nothing to write', 0) -%}{%- endcall -%}
        {%- else -%}
          {#- The steps with rows to write, in order; each guards against writers since the
              one before it (the version read again), and the last is dbt's 'main'. -#}
          {%- set steps = [] -%}
          {%- for step, rows in [('close_changed', plan['changed_open'] | int), ('close_deleted', load.deleted),
                                 ('insert_changed', load.changed), ('insert_new', load.new)] if rows > 0 -%}
            {%- do steps.append(step) -%}
          {%- endfor -%}
          {%- do read.update({'rows': plan['scope_rows'] | int}) -%}  {#- the change set is not empty: it counted -#}
          {%- set guarded = {'read': read} -%}
          {{ historize._write_per_task(cfg, true) }}
          {%- for step in steps -%}
            {%- call statement('main' if loop.last else step) -%}
              {{ historize._scd2_hist_step_sql(step, cfg, target_relation, changes_view, columns.business,
                  historize._unchanged_since(guarded.read, cfg)) }}
            {%- endcall -%}
            {%- if not loop.last -%}
              {%- do guarded.update({'read': historize._read_version(target_relation, historize._guard_scope(cfg, 'guarded'))}) -%}
            {%- endif -%}
          {%- endfor -%}
          {{ historize._write_per_task(cfg, false) }}
        {%- endif -%}
      {%- endif -%}
    {%- endif -%}
  {%- endif -%}
  {{ historize._report_load(cfg, load) }}
  {%- if ledger -%}
    {{ historize._record_load(ledger, cfg, target_relation, load) }}
  {%- endif -%}

  {{ historize._drop_session_views(relations.cached + [relations.staged]) }}

  {#- Grants and docs, then post-hooks, as dbt's own materializations order them; a history
      table is never replaced, so grants another tool set stay unless the grants config says so. -#}
  {%- set grant_config = config.get('grants') -%}
  {%- do apply_grants(target_relation, grant_config, should_revoke=should_revoke(existing_relation, full_refresh_mode=false)) -%}
  {%- do persist_docs(target_relation, model) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
