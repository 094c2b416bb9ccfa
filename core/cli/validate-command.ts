/**
 * `aurora-bench validate` checks each experiment file against the schema and plans it.
 * It exits 1 when any file is bad.
 */
import { printErr, printOut } from './terminal';
import { isSpecSchemaFile, loadSpecFile } from '../experiment/validate';
import { repeatsText } from '../experiment/rounds';
import type { CliContext } from './cli-context';

export async function validateAction(
  specs: readonly string[],
  context: Pick<CliContext, 'builtinWorkloads'>,
): Promise<number> {
  let bad = 0;
  for (const file of specs) {
    // `validate experiments/*.json` also matches the published JSON Schema itself.
    if (isSpecSchemaFile(file)) {
      printOut(`skip: ${file} (the experiment JSON Schema, not an experiment)\n`);
      continue;
    }
    try {
      printOut(`ok: ${file} (${await validSpecSummary(file, context.builtinWorkloads)})\n`);
    } catch (e) {
      bad++;
      const message = (e as Error).message;
      printErr(`${message.startsWith(file) ? message : `${file}: ${message}`}\n`);
    }
  }
  return bad > 0 ? 1 : 0;
}

/** What an `ok:` line says of a valid file. */
async function validSpecSummary(file: string, builtinWorkloads: string): Promise<string> {
  const loaded = loadSpecFile(file, builtinWorkloads);
  const { spec } = loaded;
  // Planning checks what the schema cannot, such as sysbench options per test.
  // It plans for AWS unless every variant is a local-only what-if.
  const { hasLocalOnlyParameters } = await import('../plan/plan');
  const { preparePlan } = await import('../plan/prepare');
  const localOnly = spec.variants.filter((v) => hasLocalOnlyParameters(spec, v)).map((v) => v.name);
  // What the AWS backend cannot provision yet is said, but the spec is still valid.
  const prepared = preparePlan(loaded, {
    backend: localOnly.length === spec.variants.length ? 'local' : 'aws',
    source: file,
    refusals: 'show',
  });
  const whatIfs =
    localOnly.length > 0
      ? `; local-only what-if: ${localOnly.join(', ')} (an AWS plan ` +
        `refuses ${localOnly.length === 1 ? 'it' : 'them'})`
      : '';
  const notOnAws = [
    ...new Set(
      prepared.notes
        .filter((n) => n.level === 'refused')
        .map((n) => `${n.path}: ${n.message.replace(/^variant "[^"]*": /, '')}`),
    ),
  ];
  const awsNote = notOnAws.length > 0 ? `; not on AWS yet: ${notOnAws.join('; ')}` : '';
  const size = `${spec.variants.length} variants, ${spec.workloads.length} workloads, ${repeatsText(spec)}`;
  return size + whatIfs + awsNote;
}
