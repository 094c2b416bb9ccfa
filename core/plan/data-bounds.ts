/**
 * What a spec's data may ask of the backend that holds it.
 * A data set no disk can hold would prepare for days and fail at the end.
 * So it is refused at plan time with the JSON path, before a server starts.
 */
import { awsDataLimitBytes, dataDiskBytes, engineName } from '../aurora/engines';
import { variantEngine } from '../experiment/engine-checks';
import type { Spec } from '../experiment/schema';
import type { PlanNote } from './types';

/** What a backend holds in bytes, and how the refusal names that room. */
export interface DataRoom {
  readonly bytes: number;
  readonly what: string;
}

const gib = (bytes: number) => `${(bytes / 2 ** 30).toLocaleString('en-US', { maximumFractionDigits: 1 })} GiB`;

function refusal(spec: Spec, needed: number, room: DataRoom): PlanNote {
  const rows = spec.data.tables * spec.data.tableSize;
  return {
    level: 'refused',
    path: 'data.tableSize',
    message:
      `${rows.toLocaleString('en-US')} rows (data.tables x data.tableSize) need about ${gib(needed)} of disk, ` +
      `more than ${room.what} (${gib(room.bytes)}): use fewer rows`,
  };
}

/**
 * Locally every server of a cell holds a copy under the run root, and a duet's members run at once.
 * So the most copies at a time are checked against `free` bytes there.
 */
export function localDataRefusals(spec: Spec, room: DataRoom): PlanNote[] {
  const copies = spec.variants.map((v) => 1 + v.readers);
  const atOnce = spec.order === 'duet' ? copies.reduce((a, b) => a + b, 0) : Math.max(...copies);
  const needed = dataDiskBytes(spec.data) * atOnce;
  return needed > room.bytes ? [refusal(spec, needed, room)] : [];
}

/** On AWS one server's storage holds the data. */
export function awsDataRefusals(spec: Spec): PlanNote[] {
  const needed = dataDiskBytes(spec.data);
  const kinds = [...new Set(spec.variants.map((v) => variantEngine(spec, v).kind))];
  const tightest = kinds.map((kind) => ({ kind, bytes: awsDataLimitBytes(kind) })).sort((a, b) => a.bytes - b.bytes)[0];
  if (tightest === undefined || needed <= tightest.bytes) return [];
  const engine = spec.variants.map((v) => variantEngine(spec, v)).find((e) => e.kind === tightest.kind)!;
  return [refusal(spec, needed, { bytes: tightest.bytes, what: `what ${engineName(engine)} storage holds on AWS` })];
}
