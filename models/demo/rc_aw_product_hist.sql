{{ config(materialized='scd2_hist', unique_key='rc_aw_product_key') }}

select * from {{ ref('rc_aw_product') }}
