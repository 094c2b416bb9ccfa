/**
 * The rehearsal's timings where AWS's would make a run of seconds wait minutes: the backend's
 * configuration takes them (standing-config.ts), and the scope printed before a run names them.
 */

/** Seconds between a server sample and its CloudWatch datapoint (AWS: one to three minutes). */
export const DEFAULT_METRICS_LAG_S = 2;
/**
 * AwsBackendConfig.parameterGroupSettleS here: the wait is taken
 * (and its path rehearsed), only shorter than RDS's 5 minutes.
 */
export const REHEARSAL_PARAMETER_GROUP_SETTLE_S = 3;
/**
 * AwsBackendConfig.volumeMetricsPeriodS here, and the interval the rehearsal's CloudWatch publishes
 * a cluster volume's I/O at: Aurora's 5 minutes would hold every cell up to 5 minutes for the
 * interval covering its last step's end, for steps of seconds.
 */
export const REHEARSAL_VOLUME_PERIOD_S = 5;
/**
 * AwsBackendConfig.metricsPeriodS here: the rehearsal's CloudWatch holds per-second samples
 * (cloudwatch-publisher.ts), so a period of seconds has data, and a step of seconds waits that long
 * for the period covering its end instead of up to a minute.
 */
export const REHEARSAL_METRICS_PERIOD_S = 5;
