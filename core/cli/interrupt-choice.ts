/**
 * What Ctrl-C during `run --aws` does with the execution.
 * A person at a terminal is asked whether to stop it or leave it running.
 * Without a terminal nobody can answer, so it stops and leaves nothing running up costs.
 * The line says that this default was taken and why.
 */
import { createInterface } from 'node:readline';

export type InterruptChoice = 'stop' | 'leave';

export interface InterruptIo {
  readonly input: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly output: NodeJS.WritableStream;
}

/**
 * s, stop or empty stops, and l or leave leaves.
 * Anything else is asked again, up to three times, then it stops.
 */
export async function askOnInterrupt(io: InterruptIo, executionArn: string): Promise<InterruptChoice> {
  if (io.input.isTTY !== true) {
    io.output.write(
      `\nCtrl-C: stdin is not a terminal, so nobody can be asked: stopping the execution (the default without ` +
        `a terminal) ${executionArn}\n`,
    );
    return 'stop';
  }
  const rl = createInterface({ input: io.input, terminal: false });
  const question =
    `\nCtrl-C: stop execution ${executionArn} (its cells are torn down) or leave it running? ` + `[S]top / [l]eave: `;
  try {
    let attempts = 0;
    io.output.write(question);
    // An iterator keeps lines typed ahead of the question.
    for await (const line of rl) {
      const a = line.trim().toLowerCase();
      if (a === '' || a === 's' || a === 'stop') return 'stop';
      if (a === 'l' || a === 'leave') return 'leave';
      if (++attempts >= 3) break;
      io.output.write(`"${line.trim()}": answer s (stop) or l (leave)${question}`);
    }
    io.output.write('\nno answer: stopping the execution\n');
    return 'stop';
  } finally {
    rl.close();
  }
}
