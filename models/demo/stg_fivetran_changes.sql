{{ config(materialized='view') }}

-- One batch of change events: the batch of the demo load (seed fivetran_change_events).
select
    id,
    col1,
    col2,
    _fivetran_start,
    _fivetran_op,
    _fivetran_synced
from {{ ref('fivetran_change_events') }}
where batch_number = {{ [var('demo_load', 1) | int, 3] | min }}  -- load 4 changes products only
