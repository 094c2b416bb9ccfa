/**
 * A table note said once per block. Tables side by side often carry the same footnote (the marker "*" on
 * within-run intervals): a reader reads it under the first table, and the later ones point back to it.
 */
import type { TableBlock } from './model';

/** A note that explains a marker: "*: interval from ..." gives "*". */
const markerOf = (note: string): string | null => /^([^\s\w]{1,3}|\([a-z]+\)):\s/.exec(note)?.[1] ?? null;

/** The tables in their order, each note already printed under an earlier one dropped, or pointed back to. */
export function notesOnce(tables: readonly TableBlock[]): TableBlock[] {
  const said = new Set<string>();
  return tables.map((t) => {
    if (t.notes === undefined) return t;
    const notes = t.notes.flatMap((n) => {
      if (!said.has(n)) {
        said.add(n);
        return [n];
      }
      const marker = markerOf(n);
      return marker !== null ? [`${marker}: as under the table above.`] : [];
    });
    return { ...t, notes };
  });
}
