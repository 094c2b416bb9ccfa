import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSpecFile, SpecError, validateSpec, specJsonSchema } from '../../core/experiment/validate';
import { SpecSchema, type SpecInput } from '../../core/experiment/schema';
import { auroraParameterProblems } from '../../core/experiment/aurora-parameters';
import { readFileSync, readdirSync } from 'node:fs';

const specDirs: string[] = [];
/** A temporary folder for spec files, removed after the file's tests. */
function specDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ab-spec-'));
  specDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of specDirs) rmSync(dir, { recursive: true, force: true });
});

const BUILTIN = join(__dirname, '..', '..', 'client', 'workloads');

function minimal(): SpecInput {
  return {
    name: 'tiny',
    engine: { version: '3.04.0' },
    variants: [{ name: 'a', instanceClass: 'db.r6g.large' }],
    data: { tables: 1, tableSize: 100 },
    workloads: [{ name: 'rw', test: 'oltp_read_write' }],
  };
}

function problemsOf(doc: unknown): { path: string; message: string }[] {
  try {
    validateSpec(doc, 'x.json');
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    return [...(e as SpecError).problems];
  }
  throw new Error('expected the spec to be invalid');
}

describe('spec validation', () => {
  it('accepts a minimal spec and applies defaults', () => {
    // Act
    const spec = validateSpec(minimal());
    // Assert
    expect(spec.repeats).toBe(1);
    expect(spec.order).toBe('interleaved');
    expect(spec.defaults).toEqual({ durationS: 60, warmupS: 0, reportIntervalS: 1, percentile: 95 });
    expect(spec.variants[0]!.clients).toEqual({ count: 1, instanceType: 'c6i.large', placement: 'same-az' });
    expect(spec.workloads[0]!.threads).toEqual([1]);
    expect(spec.workloads[0]!.rates).toEqual([0]);
    expect(spec.data.reuse).toBe('cell');
  });

  it('names the JSON path and what was expected for a bad instance class', () => {
    const doc = minimal();
    (doc.variants[0] as { instanceClass: string }).instanceClass = 'r6g.large';
    const problems = problemsOf(doc);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toBe('variants[0].instanceClass');
    expect(problems[0]!.message).toContain('an RDS instance class such as db.r6g.2xlarge');
    expect(problems[0]!.message).toContain('"r6g.large"');
  });

  it('rejects an unknown workload test with the allowed values', () => {
    const doc = minimal();
    (doc.workloads[0] as { test: string }).test = 'oltp_bogus';
    const problems = problemsOf(doc);
    expect(problems[0]!.path).toBe('workloads[0].test');
    expect(problems[0]!.message).toMatch(/expected one of "oltp_read_only".*got "oltp_bogus"/);
  });

  it('rejects unknown fields and reports every problem at once', () => {
    const doc = { ...minimal(), repeat: 3, data: { tables: 0, tableSize: 100 } };
    const problems = problemsOf(doc);
    expect(problems.map((p) => p.path).sort()).toEqual(['', 'data.tables'].sort());
    expect(problems.find((p) => p.path === '')!.message).toBe('unknown field "repeat"');
  });

  it('requires exactly one of test and script', () => {
    const doc = minimal();
    doc.workloads[0] = { name: 'rw', test: 'oltp_read_write', script: 'x.lua' };
    expect(problemsOf(doc)[0]!.message).toMatch(/exactly one of "test"/);
  });

  it('refuses a reader target on a variant without readers, and writes to a reader without forwarding', () => {
    const doc = minimal();
    doc.workloads.push({ name: 'ro', test: 'oltp_read_only', target: 'reader' });
    expect(problemsOf(doc)).toEqual([
      { path: 'workloads[1].target', message: 'target "reader" needs readers but variant "a" has readers: 0' },
    ]);
    doc.variants[0] = { name: 'a', instanceClass: 'db.r6g.large', readers: 1 };
    doc.workloads.push({ name: 'w', test: 'oltp_write_only', target: 'reader' });
    expect(problemsOf(doc)[0]!.message).toMatch(
      /workload "w" writes but targets reader of variant "a", which has no writeForwarding/,
    );
  });

  it('checks duplicate names and unknown parameter templates', () => {
    const doc = minimal();
    doc.variants.push({ name: 'a', instanceClass: 'db.r5.large', parameterTemplate: 'nope' });
    const problems = problemsOf(doc);
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: 'variants[1].name', message: 'duplicate name "a"' },
        { path: 'variants[1].parameterTemplate', message: 'unknown parameter template "nope" (defined: none)' },
      ]),
    );
  });

  it('names the file in syntax errors and missing files', () => {
    const dir = specDir();
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "name": ');
    expect(() => loadSpecFile(bad, BUILTIN)).toThrow(
      /bad\.json: invalid experiment spec\n {2}- \(root\): not valid JSON/,
    );
    expect(() => loadSpecFile(join(dir, 'missing.json'), BUILTIN)).toThrow(/missing\.json.*file not found/s);
  });

  it('reads YAML specs and custom Lua scripts next to the spec', () => {
    const dir = specDir();
    writeFileSync(join(dir, 'scan.lua'), 'function event() end\n');
    const file = join(dir, 'exp.yaml');
    writeFileSync(
      file,
      [
        'name: yaml-one',
        'engine: {version: "3.04.0"}',
        'variants: [{name: a, instanceClass: db.r6g.large}]',
        'data: {tables: 1, tableSize: 10}',
        'workloads: [{name: scan, script: scan.lua}]',
      ].join('\n'),
    );
    const loaded = loadSpecFile(file, BUILTIN);
    expect(loaded.spec.name).toBe('yaml-one');
    expect(loaded.scripts).toEqual({ 'scan.lua': 'function event() end\n' });
  });

  it('says which script is missing', () => {
    const dir = specDir();
    const file = join(dir, 'exp.json');
    writeFileSync(file, JSON.stringify({ ...minimal(), workloads: [{ name: 'scan', script: 'nowhere.lua' }] }));
    expect(() => loadSpecFile(file, BUILTIN)).toThrow(/workloads\[0\]\.script: Lua file "nowhere\.lua" not found/);
  });

  it('publishes the same JSON Schema that is committed as experiments/schema.json', () => {
    const committed = JSON.parse(readFileSync(join(__dirname, '..', '..', 'experiments', 'schema.json'), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(specJsonSchema())));
  });

  it('refuses thread_handling on Aurora with the exact JSON path, why, and how to keep it as a local what-if', () => {
    // Arrange
    const doc = minimal();
    doc.variants.push(
      { name: 'b', instanceClass: 'db.r6g.large' },
      { name: 'c', instanceClass: 'db.r6g.large', instanceParameters: { thread_handling: 'pool-of-threads' } },
    );
    // Act
    const problems = problemsOf(doc);
    // Assert
    expect(problems).toEqual([
      {
        path: 'variants[2].instanceParameters.thread_handling',
        message:
          'not modifiable on Aurora MySQL 3 at the instance level; remove it, or keep it for a MariaDB-only ' +
          'what-if on the local backend in variants[2].localOnlyParameters (an AWS plan refuses that variant)',
      },
    ]);
  });

  it('refuses cluster-only parameters in instanceParameters and vice versa, naming template paths', () => {
    // Arrange
    const doc: SpecInput = {
      ...minimal(),
      parameterTemplates: {
        tuned: { clusterParameters: { sync_binlog: 1000 }, instanceParameters: { innodb_flush_neighbors: 0 } },
      },
      variants: [
        {
          name: 'a',
          instanceClass: 'db.r6g.large',
          parameterTemplate: 'tuned',
          clusterParameters: { thread_handling: 'pool-of-threads' },
          instanceParameters: { innodb_trx_commit_allow_data_loss: 1 },
        },
      ],
    };
    // Act
    const problems = problemsOf(doc);
    // Assert
    expect(problems.map((p) => p.path)).toEqual([
      'parameterTemplates.tuned.clusterParameters.sync_binlog',
      'parameterTemplates.tuned.instanceParameters.innodb_flush_neighbors',
      'variants[0].clusterParameters.thread_handling',
      'variants[0].instanceParameters.innodb_trx_commit_allow_data_loss',
    ]);
    expect(problems[0]!.message).toMatch(/^not modifiable on Aurora MySQL 3 at the instance level; remove it/);
    expect(problems[1]!.message).toMatch(
      /^does not apply to Aurora MySQL 3: .*parameterTemplates\.tuned\.localOnlyParameters/,
    );
    expect(problems[3]!.message).toBe('cluster-level only on Aurora MySQL 3: it belongs in clusterParameters');
  });

  it('accepts a modifiable instance-level parameter in clusterParameters: set for every instance', () => {
    // Arrange: what the original S1 study's cluster parameter group set
    const doc = minimal();
    doc.variants[0] = {
      name: 'a',
      instanceClass: 'db.r6g.large',
      clusterParameters: { max_prepared_stmt_count: 1048576 },
    };
    // Act
    const spec = validateSpec(doc, 'x.json');
    // Assert
    expect(spec.variants[0]!.clusterParameters).toEqual({ max_prepared_stmt_count: 1048576 });
  });

  it('accepts MariaDB-only settings marked localOnlyParameters (they are not Aurora parameters)', () => {
    // Arrange
    const doc = minimal();
    doc.variants[0] = {
      name: 'a',
      instanceClass: 'db.r6g.large',
      localOnlyParameters: { thread_handling: 'pool-of-threads', innodb_flush_method: 'O_DIRECT' },
    };
    // Act
    const spec = validateSpec(doc, 'x.json');
    // Assert
    expect(spec.variants[0]!.localOnlyParameters).toEqual({
      thread_handling: 'pool-of-threads',
      innodb_flush_method: 'O_DIRECT',
    });
  });

  it('checks the parameters a writeForwarding block stands for against the engine version', () => {
    // Arrange: local write forwarding on Aurora MySQL 2, where aurora_fwd_writer_* do not exist
    const doc = minimal();
    doc.engine = { version: '5.7.mysql_aurora.2.12.5' };
    doc.variants[0] = {
      name: 'a',
      instanceClass: 'db.r6g.large',
      readers: 1,
      writeForwarding: { enabled: true, idleTimeoutS: 60 },
    };
    // Act
    const problems = problemsOf(doc);
    // Assert
    expect(problems).toEqual([
      {
        path: 'variants[0].writeForwarding.enabled',
        message: expect.stringMatching(/^local write forwarding needs Aurora MySQL 3\.04 or higher/) as string,
      },
      {
        path: 'variants[0].writeForwarding',
        message:
          'sets aurora_fwd_writer_idle_timeout=60, which Aurora refuses: unknown to Aurora MySQL 2: it exists ' +
          'only in Aurora MySQL 3',
      },
    ]);
  });

  it('names the file and the JSON path when a spec file sets what Aurora refuses', () => {
    // Arrange
    const dir = specDir();
    const file = join(dir, 'pool.json');
    writeFileSync(
      file,
      JSON.stringify({
        ...minimal(),
        variants: [
          { name: 'a', instanceClass: 'db.r6g.large', instanceParameters: { thread_handling: 'pool-of-threads' } },
        ],
      }),
    );
    // Act
    let message = '';
    try {
      loadSpecFile(file, BUILTIN);
    } catch (e) {
      message = (e as Error).message;
    }
    // Assert
    expect(
      message.startsWith(
        `${file}: invalid experiment spec\n  - variants[0].instanceParameters.thread_handling: not modifiable ` +
          `on Aurora MySQL 3`,
      ),
    ).toBe(true);
  });

  it('finds nothing Aurora would refuse in any shipped experiment', () => {
    // Arrange
    const dir = join(__dirname, '..', '..', 'experiments');
    const docs = readdirSync(dir)
      .filter((f) => f.endsWith('.json') && f !== 'schema.json')
      .map((f) => [f, SpecSchema.parse(JSON.parse(readFileSync(join(dir, f), 'utf8')))] as const);
    // Act
    const problems = docs.map(([f, spec]) => [f, auroraParameterProblems(spec)]);
    // Assert
    expect(docs.length).toBeGreaterThanOrEqual(6);
    expect(problems).toEqual(docs.map(([f]) => [f, []]));
  });

  it('validates every experiment shipped in experiments/', () => {
    const dir = join(__dirname, '..', '..', 'experiments');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'schema.json');
    expect(files).toContain('quickstart.json');
    for (const f of files) expect(() => loadSpecFile(join(dir, f), BUILTIN)).not.toThrow();
  });
});
