-- variant_summary: one row per run, variant, workload, threads, rate and target, across repeats
-- (cells of the same variant). Mean, sample standard deviation and n over the repeats whose step
-- succeeded; failed repeats are counted, not averaged in. Same SQL subset as step_summary.
CREATE OR REPLACE VIEW variant_summary AS
SELECT
  run_id,
  variant,
  workload,
  threads,
  rate,
  target,
  MAX(instance_class) AS instance_class,
  MAX(az) AS az,
  MAX(test) AS test,
  MIN(step_index) AS step_index,
  COUNT(CASE WHEN status = 'ok' THEN 1 END) AS n,
  COUNT(CASE WHEN status <> 'ok' THEN 1 END) AS n_failed,
  AVG(CASE WHEN status = 'ok' THEN tps END) AS tps_mean,
  STDDEV_SAMP(CASE WHEN status = 'ok' THEN tps END) AS tps_stddev,
  AVG(CASE WHEN status = 'ok' THEN qps END) AS qps_mean,
  STDDEV_SAMP(CASE WHEN status = 'ok' THEN qps END) AS qps_stddev,
  AVG(CASE WHEN status = 'ok' THEN lat_avg_ms END) AS lat_avg_ms_mean,
  AVG(CASE WHEN status = 'ok' THEN lat_pct_ms END) AS lat_pct_ms_mean,
  STDDEV_SAMP(CASE WHEN status = 'ok' THEN lat_pct_ms END) AS lat_pct_ms_stddev,
  MAX(lat_pct) AS lat_pct,
  MAX(offered_tps) AS offered_tps,
  SUM(errors) AS errors,
  SUM(reconnects) AS reconnects,
  AVG(client_cpu_avg_pct) AS client_cpu_avg_pct,
  SUM(saturated_clients) AS saturated_clients,
  MAX(error) AS error
FROM step_summary
GROUP BY run_id, variant, workload, threads, rate, target
