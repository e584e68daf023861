{#- Adoption (option adopt_from): a model's first load takes over a history
    kept until now by another tool, checked before anything is written.
    `scd2_hist` adopts a dbt snapshot or an SCD2 table
    (_scd2_hist_adopt.sql), `fivetran_history` a Fivetran history-mode table
    (_fivetran_history.sql); both check and set aside rows with the macros
    below. See docs/switching.md. -#}

{#- The defects an adoption looks for, in the order a row is checked: a row
    gets the first that applies (each kind finds those its table can hold).
    `repair` is the rule adopt_repair applies, none where no rule applies. -#}
{% macro _adoption_defects() %}
  {{ return({
      'keyless_deletion_record': {'found': 'a deletion record without its key (dbt-core 11949: hard_deletes new_record writes every column of it NULL)',
                                  'repair': 'the record is set aside; the version before it still ends at the deletion'},
      'null_key': {'found': 'a NULL in the unique key (dbt-core 11950: a composite key holding a NULL gets a new row at every run)',
                   'repair': 'the row is set aside'},
      'missing_start': {'found': 'no start (a NULL valid_from)', 'repair': none},
      'two_open_versions': {'found': 'an open version beside another that started later (dbt-core 10864, and 4661 when two runs overlap)',
                            'repair': 'every open version of a key but the one that started last is set aside'},
      'after_load': {'found': "a time after this load's load_timestamp", 'repair': none},
      'empty_interval': {'found': 'a version that ends at or before its start', 'repair': none},
      'overlapping_versions': {'found': 'a version that starts before the version before it ends', 'repair': none},
      'unchanged_version': {'found': 'a version equal to the one it follows, which it continues (dbt-core 11235: a value from NULL to non-NULL)',
                            'repair': 'the version is set aside and the one before it ends where it ended'},
  }) }}
{% endmacro %}


{#- The adoption options of `cfg`'s model, checked: adopt_from (a name), adopt_repair
    (kinds of defect a rule repairs), and with `with_columns` adopt_columns (the
    columns of an SCD2 table that is not a snapshot). -#}
{% macro _adoption_options(cfg, with_columns=false) %}
  {%- set adopt_from = historize._read_option('adopt_from', none) -%}
  {%- set adopt_repair = historize._as_name_list('adopt_repair', historize._read_option('adopt_repair', [])) -%}
  {%- set adopt_columns = historize._read_option('adopt_columns', {}) if with_columns else {} -%}
  {%- if execute -%}
    {%- set repairable = [] -%}
    {%- for kind, defect in historize._adoption_defects().items() if defect.repair -%}
      {%- do repairable.append(kind) -%}
    {%- endfor -%}
    {%- set head = "historize: model " ~ cfg.model_name ~ ": " -%}
    {%- if adopt_from is not none and (adopt_from is not string or adopt_from | trim == '') -%}
      {{ exceptions.raise_compiler_error(head ~ "adopt_from is '" ~ adopt_from ~ "'; expected "
          ~ ("the name of a snapshot of this project, or a table schema.table" if with_columns else "a table schema.table")) }}
    {%- elif adopt_repair and adopt_from is none -%}
      {{ exceptions.raise_compiler_error(head ~ "adopt_repair applies with adopt_from, which is not set") }}
    {%- elif adopt_columns and (adopt_from is none or adopt_columns is not mapping
          or adopt_columns.keys() | reject('in', ['valid_from', 'valid_to', 'current_flag', 'deleted']) | list) -%}
      {{ exceptions.raise_compiler_error(head ~ "adopt_columns is " ~ adopt_columns ~ "; expected, with adopt_from "
          ~ "naming a table, a mapping of valid_from, valid_to, current_flag and deleted to the table's columns") }}
    {%- elif adopt_repair | reject('in', repairable) | list -%}
      {{ exceptions.raise_compiler_error(head ~ "adopt_repair names " ~ adopt_repair | reject('in', repairable) | join(', ')
          ~ "; the defects it repairs: " ~ repairable | join(', ')) }}
    {%- endif -%}
  {%- endif -%}
  {{ return({'adopt_from': adopt_from | trim if adopt_from is string else none, 'adopt_repair': adopt_repair,
             'adopt_columns': adopt_columns if adopt_columns is mapping else {}}) }}
{% endmacro %}


{#- The table `schema.table` that adopt_from names, or an error. -#}
{% macro _adopted_relation(cfg) %}
  {%- set parts = cfg.adopt_from.split('.') -%}
  {%- set relation = adapter.get_relation(database=none, schema=parts[0] | trim, identifier=parts[1] | trim)
        if parts | length == 2 else none -%}
  {%- if relation is none -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": adopt_from '" ~ cfg.adopt_from
        ~ "': no such table (schema.table). Nothing was written") }}
  {%- endif -%}
  {{ return(relation) }}
{% endmacro %}


{#- The adopted table's columns, checked: it has every column of `needed`, and
    every column of `wanted` ((name, type) pairs: the model's columns and their
    types) of the same type or one it widens to. Returns {'relation', 'columns'
    ((name, type, whether it is cast to it), in `wanted`'s order), 'set_aside'
    (the table of the rows adopt_repair sets aside, beside `history`)}. -#}
{% macro _adopted_columns(cfg, history, relation, wanted, needed) %}
  {%- set head = "historize: model " ~ cfg.model_name ~ ": adopt_from '" ~ cfg.adopt_from ~ "': " -%}
  {%- set held_types = {} -%}
  {%- for column in adapter.get_columns_in_relation(relation) -%}
    {%- do held_types.update({column.name | lower: column.data_type | lower}) -%}
  {%- endfor -%}
  {%- set missing = needed | select | reject('in', held_types) | list -%}
  {%- if missing -%}
    {{ exceptions.raise_compiler_error(head ~ relation ~ " lacks the column(s) " ~ missing | join(', ')
        ~ ". Nothing was written") }}
  {%- endif -%}
  {%- set columns = [] -%}
  {%- set problems = [] -%}
  {%- for name, type in wanted -%}
    {%- set held = held_types.get(name) -%}
    {%- if held is none -%}
      {%- do problems.append(name ~ " is not in it") -%}
    {%- elif held != type and not historize._is_type_widening(held, type) -%}
      {%- do problems.append(name ~ " is " ~ held ~ " there, " ~ type ~ " in the model") -%}
    {%- endif -%}
    {%- do columns.append((name, type, held != type)) -%}
  {%- endfor -%}
  {%- if problems -%}
    {{ exceptions.raise_compiler_error(head ~ "the model's columns do not match " ~ relation ~ ": "
        ~ problems | join('; ') ~ ". Nothing was written") }}
  {%- endif -%}
  {{ return({'relation': relation, 'columns': columns,
             'set_aside': history.incorporate(path={'identifier': history.identifier ~ '__adopt_set_aside'})}) }}
{% endmacro %}


{#- An adopted column as the model holds it, from the table as `alias`. -#}
{% macro _adopted_value(column, alias) %}
  {%- set name, type, cast = column -%}
  {{- return(('cast(' ~ historize._quote(name, alias) ~ ' as ' ~ type ~ ')') if cast else historize._quote(name, alias)) -}}
{% endmacro %}


{#- Checks the adopted table before anything is written. `rows_sql` is a with
    clause whose CTE `classified` holds every row of it: the key, its interval
    (_historize_started_at, _historize_ended_at: NULL while open) and its
    defect (_historize_defect, NULL if none). Every defect found is refused,
    with its rows' keys and intervals, unless adopt_repair names its kind.
    Returns how many rows the table has, and the rows each kind sets aside. -#}
{% macro _check_adoption(cfg, adoption, rows_sql) %}
  {%- set keys = cfg.unique_key -%}
  {%- set found_sql -%}
    {{ rows_sql }}

    select
        _historize_defect as defect,
        count(*) as row_count,
        concat_ws('; ', slice(array_sort(collect_list(case when _historize_defect is not null then concat('(', concat_ws(', ',
            {%- for name in keys %} coalesce(cast({{ historize._quote(name) }} as string), 'NULL'){{ ',' if not loop.last }}{% endfor %}),
            ') from ', coalesce(cast(_historize_started_at as string), 'NULL'),
            ' to ', coalesce(cast(_historize_ended_at as string), 'open')) end)), 1, 5)) as examples
    from classified
    group by _historize_defect
  {%- endset -%}
  {%- set defects = historize._adoption_defects() -%}
  {%- set found = {} -%}
  {%- set rows = {'all': 0} -%}
  {%- for row in run_query(found_sql).rows -%}
    {%- do rows.update({'all': rows.all + row['row_count'] | int}) -%}
    {%- if row['defect'] is not none -%}
      {%- do found.update({row['defect']: row}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set refused = [] -%}
  {%- set repairable = [] -%}
  {%- for kind, defect in defects.items() if kind in found and kind not in cfg.adopt_repair -%}
    {%- set row = found[kind] -%}
    {%- do refused.append(kind ~ " (" ~ defect.found ~ "): " ~ row['row_count'] ~ " row(s), e.g. " ~ row['examples']) -%}
    {%- if defect.repair -%}{%- do repairable.append(kind) -%}{%- endif -%}
  {%- endfor -%}
  {%- if refused -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ cfg.model_name ~ ": cannot adopt "
        ~ adoption.described ~ ": " ~ refused | join('. ') ~ ". Nothing was written; "
        ~ adoption.relation ~ " is unchanged." ~ (" adopt_repair=" ~ (cfg.adopt_repair + repairable) | list ~ " would set those rows "
        ~ "aside (docs/switching.md)" if repairable | length == refused | length else "")) }}
  {%- endif -%}
  {%- set set_aside = {} -%}
  {%- for kind in cfg.adopt_repair if kind in found -%}
    {%- do set_aside.update({kind: found[kind]['row_count'] | int}) -%}
  {%- endfor -%}
  {{ return({'rows': rows.all, 'set_aside': set_aside}) }}
{% endmacro %}


{#- Writes the rows adopt_repair sets aside (`set_aside`: the count of each kind,
    _check_adoption's), as the adopted table holds them (`rows_sql`'s
    `classified` carries each as _historize_adopted_row), with the defect and the
    run that set them aside; a rerun writes the same rows. -#}
{% macro _write_set_aside(cfg, adoption, rows_sql, set_aside) %}
  {%- call statement('set_aside') -%}
    create or replace table {{ adoption.set_aside }}
    using delta
    as
    {{ rows_sql }}

    select
        _historize_adopted_row.*,
        _historize_defect as historize_defect,
        {{ historize._string_literal(historize.load_run_id()) }} as historize_load_run_id
    from classified
    where _historize_defect in ({% for kind in cfg.adopt_repair %}{{ historize._string_literal(kind) }}{{ ', ' if not loop.last }}{% endfor %})
  {%- endcall -%}
  {{ log("historize: " ~ cfg.model_name ~ ": set aside " ~ set_aside.values() | sum ~ " row(s) of " ~ adoption.relation
      ~ " in " ~ adoption.set_aside ~ " (" ~ set_aside.items() | map('join', ': ') | join(', ') ~ ")", info=true) }}
{% endmacro %}


{#- The adoption's writes, once _check_adoption found nothing it refuses: the rows
    set aside, then the history table `history` created from `versions_sql`, in one
    commit, recording where it came from. -#}
{% macro _adopt(cfg, history, adoption, rows_sql, versions_sql, partition_by=none) %}
  {%- set adopted = historize._check_adoption(cfg, adoption, rows_sql) -%}
  {%- if adopted.set_aside -%}
    {{ historize._write_set_aside(cfg, adoption, rows_sql, adopted.set_aside) }}
  {%- endif -%}
  {%- set properties = historize._history_properties(cfg) -%}
  {%- do properties.update({'historize.adopted_from': adoption.relation | string}) -%}
  {%- call statement('adopt') -%}
    {{ historize._create_history_table_sql(history, properties, select_sql=versions_sql, partition_by=partition_by) }}
  {%- endcall -%}
  {%- do adapter.cache_added(history) -%}
  {{ log("historize: " ~ cfg.model_name ~ ": adopted " ~ adoption.relation ~ " (" ~ adopted.rows ~ " row(s)) as "
      ~ history, info=true) }}
{% endmacro %}
