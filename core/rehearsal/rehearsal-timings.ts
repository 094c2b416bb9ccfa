/** The rehearsal's timings where AWS's would make a run of seconds wait minutes. */

/** Seconds between a server sample and its CloudWatch datapoint. On AWS this is one to three minutes. */
export const DEFAULT_METRICS_LAG_S = 2;
/** The wait is still taken, so its path is rehearsed, but shorter than RDS's 5 minutes. */
export const REHEARSAL_PARAMETER_GROUP_SETTLE_S = 3;
/**
 * Also the interval the rehearsal's CloudWatch publishes a cluster volume's I/O at.
 * Aurora's 5 minutes would hold every cell up to 5 minutes after steps of seconds.
 */
export const REHEARSAL_VOLUME_PERIOD_S = 5;
/**
 * The rehearsal's CloudWatch holds per-second samples, so a period of seconds has data.
 * A step of seconds then waits that long for its last period instead of up to a minute.
 */
export const REHEARSAL_METRICS_PERIOD_S = 5;
