{{ config(
    materialized='scd_type6',
    unique_key='player_id',
    meta={
        'type0_columns': ['birth_date'],
        'type1_columns': ['email', 'phone']
    }
) }}

select * from {{ ref('stg_player') }}
