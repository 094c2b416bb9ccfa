/**
 * Every state name of state-machines/benchmark.asl.json: code that looks for a state (progress
 * lines, the run id PlanRun returns, the sweeper reading an execution's history) names it through
 * this list, and test/unit/asl.test.ts fails when the list and the definition disagree.
 */
export const STATE = {
  PlanRun: 'PlanRun',
  PlanFailed: 'PlanFailed',
  RunCells: 'RunCells',
  ProvisionCell: 'ProvisionCell',
  WaitCellReady: 'WaitCellReady',
  CheckCellReady: 'CheckCellReady',
  IsCellReady: 'IsCellReady',
  CellReady: 'CellReady',
  StartClients: 'StartClients',
  WaitClientsReady: 'WaitClientsReady',
  CheckClientsReady: 'CheckClientsReady',
  AreClientsReady: 'AreClientsReady',
  ClientsReady: 'ClientsReady',
  RunStepSegments: 'RunStepSegments',
  RunStep: 'RunStep',
  AreStepsLeft: 'AreStepsLeft',
  WaitForStep: 'WaitForStep',
  SegmentDone: 'SegmentDone',
  CollectLateMetrics: 'CollectLateMetrics',
  AreLateMetricsCollected: 'AreLateMetricsCollected',
  WaitForLateMetrics: 'WaitForLateMetrics',
  TeardownCell: 'TeardownCell',
  TeardownCellOnError: 'TeardownCellOnError',
  TeardownFailed: 'TeardownFailed',
  FinishRun: 'FinishRun',
  ComputeVerdicts: 'ComputeVerdicts',
  DidRunSucceed: 'DidRunSucceed',
  RunSucceeded: 'RunSucceeded',
  RunStepsFailed: 'RunStepsFailed',
  RunFailed: 'RunFailed',
} as const;
