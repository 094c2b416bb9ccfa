-- interval_totals: per run, cell, step and report interval, summed across the step's clients (the
-- throughput the server saw in that interval). The report uses these as per-interval samples.
CREATE OR REPLACE VIEW interval_totals AS
SELECT
  run_id,
  cell_id,
  variant,
  step_id,
  t,
  COUNT(*) AS clients,
  SUM(tps) AS tps,
  SUM(qps) AS qps,
  MAX(lat_pct_ms) AS lat_pct_ms,
  SUM(errors_per_s) AS errors_per_s,
  SUM(reconnects_per_s) AS reconnects_per_s,
  MAX(dt) AS dt
FROM intervals
GROUP BY run_id, cell_id, variant, step_id, t
