{{ config(
    materialized='scd_type6',
    unique_key='program_id',
    meta={
        'type0_columns': ['created_on'],
        'type1_columns': ['current_program_name', 'current_admin_agency'],
        'type3_columns': {'eligibility_threshold': 'previous_eligibility_threshold'},
        'audit': true
    }
) }}

select * from {{ ref('stg_program') }}
