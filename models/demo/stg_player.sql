{{ config(materialized='view') }}

-- The casino players snapshot of the demo load.
select
    player_id,
    birth_date,
    email,
    phone,
    tier,
    home_property,
    risk_score
from {{ ref('player_snapshots') }}
where load_number = {{ [var('demo_load', 1) | int, 3] | min }}  -- load 4 changes products only
