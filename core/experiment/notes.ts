/**
 * A note about an experiment at a JSON path: what scaling changed, what the plan cannot do on the
 * chosen backend, what a backend refuses. Said out loud instead of silently skipped.
 */
export interface PlanNote {
  readonly level: 'info' | 'warning' | 'refused';
  /** JSON path into the spec, e.g. "variants[1].clusterParameters.aurora_fwd_writer_idle_timeout". */
  readonly path: string;
  readonly message: string;
}
