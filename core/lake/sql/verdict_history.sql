-- verdict_history: every run's verdicts in the order the runs started, with the run's start and
-- status: what a dashboard or a query plots per experiment, step and metric over the nights
-- (verdicts holds one row per step and metric of a run, written after the run by ComputeVerdicts).
-- The run is joined, not copied, so a run row rewritten later (its final status) shows here as it is.
CREATE OR REPLACE VIEW verdict_history AS
SELECT
  v.experiment,
  r.started_at,
  v.run_id,
  r.status AS run_status,
  r.backend,
  v.variant,
  v.workload,
  v.threads,
  v.rate,
  v.target,
  v.measurement_hash,
  v.metric,
  v.metric_label,
  v.verdict,
  CASE WHEN v.verdict = 'regressed' THEN 1 ELSE 0 END AS regressed,
  v.value,
  v.baseline_mean,
  v.baseline_runs,
  v.ratio,
  v.interval_low,
  v.interval_high,
  v.since_run_id,
  v.reason,
  v.computed_at,
  v.dt
FROM verdicts v
JOIN runs r ON r.run_id = v.run_id
