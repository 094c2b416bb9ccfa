/** A note about an experiment at a JSON path, said out loud instead of silently skipped. */
export interface PlanNote {
  readonly level: 'info' | 'warning' | 'refused';
  /** JSON path into the spec. */
  readonly path: string;
  readonly message: string;
}
