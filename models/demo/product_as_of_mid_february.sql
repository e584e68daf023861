{{ config(materialized='table') }}

-- The products as they were on 2026-02-15: one version per product alive then.
select
    product_id,
    color,
    list_price,
    version_started_at
from ({{ historize.as_of(ref('rc_aw_product_hist'), "timestamp'2026-02-15 00:00:00+00:00'") }}) as products
