{{ config(materialized='view') }}

-- The federal programs snapshot of the demo load.
select
    program_id,
    created_on,
    current_program_name,
    current_admin_agency,
    eligibility_threshold,
    funding_cap_usd,
    program_status
from {{ ref('program_snapshots') }}
where load_number = {{ [var('demo_load', 1) | int, 3] | min }}  -- load 4 changes products only
