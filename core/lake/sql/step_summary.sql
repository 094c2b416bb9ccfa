-- step_summary: one row per run, cell and step, aggregated across the step's clients.
-- Written in the SQL subset both Athena (Trino) and DuckDB run: no engine-specific functions,
-- explicit CASTs to DOUBLE so Trino never does integer division, no trailing semicolon (Athena).
-- Throughput is summed over clients (they ran at once against the same endpoint); latency is the
-- worst client's percentiles and max (a percentile cannot be averaged), the mean latency weighted by
-- each client's events. A step with any failed client is failed; its metrics stay NULL when no
-- client produced a summary (SUM over NULLs is NULL), so a failure is never read as zero throughput.
-- A step whose clients are ok or overloaded (a rate sysbench could not keep up with; their tps is the
-- achieved rate before sysbench stopped, core/lake/step-rows.ts) is overloaded: a measurement, not a failure.
-- A skipped step (one row, status skipped: a rate not tried after a lower one overloaded) stays skipped.
CREATE OR REPLACE VIEW step_summary AS
SELECT
  run_id,
  cell_id,
  variant,
  MAX(repeat) AS repeat,
  MAX(instance_class) AS instance_class,
  MAX(az) AS az,
  step_id,
  MAX(step_index) AS step_index,
  MAX(workload) AS workload,
  MAX(test) AS test,
  MAX(threads) AS threads,
  MAX(rate) AS rate,
  CAST(MAX(rate) * COUNT(*) AS DOUBLE) AS offered_tps,
  MAX(target) AS target,
  COUNT(*) AS clients,
  SUM(CASE WHEN status = 'ok' THEN 1 ELSE 0 END) AS ok_clients,
  CASE
    WHEN SUM(CASE WHEN status = 'skipped' THEN 1 ELSE 0 END) = COUNT(*) THEN 'skipped'
    WHEN SUM(CASE WHEN status IN ('ok', 'overloaded') THEN 0 ELSE 1 END) > 0 THEN 'failed'
    WHEN SUM(CASE WHEN status = 'overloaded' THEN 1 ELSE 0 END) > 0 THEN 'overloaded'
    ELSE 'ok'
  END AS status,
  MAX(error) AS error,
  MIN(started_at) AS started_at,
  MAX(ended_at) AS ended_at,
  SUM(tps) AS tps,
  SUM(qps) AS qps,
  SUM(events) AS events,
  SUM(reads) AS reads,
  SUM(writes) AS writes,
  SUM(other) AS other,
  COALESCE(SUM(errors), 0) AS errors,
  COALESCE(SUM(reconnects), 0) AS reconnects,
  CAST(SUM(errors) AS DOUBLE) / NULLIF(MAX(total_time_s), 0) AS errors_per_s,
  MIN(lat_min_ms) AS lat_min_ms,
  CASE
    WHEN SUM(CASE WHEN lat_avg_ms IS NOT NULL THEN events ELSE 0 END) > 0
    THEN SUM(CAST(lat_avg_ms AS DOUBLE) * events) / SUM(CASE WHEN lat_avg_ms IS NOT NULL THEN events ELSE 0 END)
    ELSE AVG(lat_avg_ms)
  END AS lat_avg_ms,
  MAX(lat_pct) AS lat_pct,
  MAX(lat_pct_ms) AS lat_pct_ms,
  MAX(lat_p50_ms) AS lat_p50_ms,
  MAX(lat_p90_ms) AS lat_p90_ms,
  MAX(lat_p95_ms) AS lat_p95_ms,
  MAX(lat_p99_ms) AS lat_p99_ms,
  MAX(lat_p999_ms) AS lat_p999_ms,
  MAX(lat_max_ms) AS lat_max_ms,
  MAX(total_time_s) AS total_time_s,
  SUM(interval_count) AS interval_count,
  AVG(client_cpu_avg_pct) AS client_cpu_avg_pct,
  MAX(client_cpu_max_pct) AS client_cpu_max_pct,
  SUM(CASE WHEN client_saturated THEN 1 ELSE 0 END) AS saturated_clients,
  SUM(read_back_checks) AS read_back_checks,
  SUM(stale_reads) AS stale_reads,
  MAX(dt) AS dt
FROM steps
GROUP BY run_id, cell_id, variant, step_id
