/**
 * Bad experiment files, one describe per class of mistake: each is refused with the file, the JSON
 * path and what to do, whatever the example within the class. AWS-only values are checked against
 * the offline tables of core/aurora/aws-names.ts (sources cited there).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSpecFile, SpecError, validateSpec, type SpecProblem } from '../../core/experiment/validate';
import { MAX_STEPS_PER_RUN, type SpecInput } from '../../core/experiment/schema';
import { MAX_SPEC_BYTES, parseStrictJson } from '../../core/experiment/spec-text';
import { closestNames } from '../../core/aurora/aws-names';

const BUILTIN = join(__dirname, '..', '..', 'client', 'workloads');

/**
 * Whether text holds a control character other than tab, newline and carriage return (what a terminal would act on).
 */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

function minimal(): SpecInput {
  return {
    name: 'tiny',
    engine: { version: '3.04.0' },
    variants: [{ name: 'a', instanceClass: 'db.r6g.large' }],
    data: { tables: 1, tableSize: 100 },
    workloads: [{ name: 'rw', test: 'oltp_read_write' }],
  };
}

function problemsOf(doc: unknown): SpecProblem[] {
  try {
    validateSpec(doc, 'x.json');
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    return [...(e as SpecError).problems];
  }
  throw new Error('expected the spec to be invalid');
}

function fileProblems(file: string): { message: string; problems: SpecProblem[] } {
  try {
    loadSpecFile(file, BUILTIN);
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    return { message: (e as Error).message, problems: [...(e as SpecError).problems] };
  }
  throw new Error(`expected ${file} to be refused`);
}

let dir: string;
/** Folders a test made beside its spec folder (a link target outside it), removed with it. */
const alsoMade: string[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ab-bad-'));
});
afterEach(() => {
  for (const d of [dir, ...alsoMade.splice(0)]) rmSync(d, { recursive: true, force: true });
});

function writeText(name: string, text: string | Buffer): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('AWS-only values, checked offline', () => {
  it.each([
    ['db.r6g.2xlargee', /not an Aurora MySQL 3 DB instance class \(did you mean db\.r6g\.2xlarge\?\)/],
    ['db.r6h.large', /not an Aurora MySQL 3 DB instance class \(did you mean db\.r.*\.large/],
    ['db.m5.large', /not an Aurora MySQL 3 DB instance class/],
    ['db.t2.medium', /an Aurora MySQL 2 class that Aurora MySQL 3 \(engine\.version 3\.04\.0\) does not offer/],
  ])('refuses the instance class %s, naming the path and the closest classes', (cls, message) => {
    // Arrange
    const doc = minimal();
    doc.variants[0] = { name: 'a', instanceClass: cls };
    // Act
    const problems = problemsOf(doc);
    // Assert
    expect(problems).toEqual([
      { path: 'variants[0].instanceClass', message: expect.stringMatching(message) as string },
    ]);
  });

  it.each(['c6i.larg', 'c9z.large', 'm5.huge'])('refuses the client instance type %s', (type) => {
    const doc = minimal();
    doc.variants[0] = { name: 'a', instanceClass: 'db.r6g.large', clients: { instanceType: type } };
    expect(problemsOf(doc)).toEqual([
      {
        path: 'variants[0].clients.instanceType',
        message: expect.stringMatching(/is not an EC2 instance type/) as string,
      },
    ]);
  });

  it('suggests the type a typo meant', () => {
    expect(closestNames('c6i.larg', ['c6i.large', 'c6g.large', 'm5.large', 'r6i.large'])).toEqual(['c6i.large']);
    expect(closestNames('c6x.large', ['c6i.large', 'c6g.large', 'm5.large'])).toEqual(['c6g.large', 'c6i.large']);
  });

  it.each(['us-east-9', 'eu-westt-1', 'us-gov-east-2'])('refuses the region %s', (region) => {
    const doc = { ...minimal(), region };
    expect(problemsOf(doc)).toEqual([
      { path: 'region', message: expect.stringMatching(new RegExp(`unknown AWS Region "${region}"`)) as string },
    ]);
  });

  it('accepts regions of every partition the SDK knows', () => {
    for (const region of ['us-east-1', 'eu-central-2', 'cn-northwest-1', 'us-gov-west-1'])
      expect(() => validateSpec({ ...minimal(), region })).not.toThrow();
  });

  it.each(['g', 'z'])('refuses the AZ letter %s', (az) => {
    const doc = minimal();
    doc.variants[0] = { name: 'a', instanceClass: 'db.r6g.large', az };
    expect(problemsOf(doc)).toEqual([
      { path: 'variants[0].az', message: expect.stringMatching(/AZ letters run from a to f/) as string },
    ]);
  });

  it.each(['3.03.1', '3.01.0', '5.7.mysql_aurora.2.12.5'])(
    'refuses local write forwarding on engine version %s',
    (version) => {
      const doc = minimal();
      doc.engine = { version };
      doc.variants[0] = { name: 'a', instanceClass: 'db.r6g.large', readers: 1, writeForwarding: { enabled: true } };
      const problems = problemsOf(doc);
      expect(problems).toContainEqual({
        path: 'variants[0].writeForwarding.enabled',
        message: expect.stringMatching(/needs Aurora MySQL 3\.04 or higher/) as string,
      });
    },
  );

  it('accepts write forwarding from 3.04 on', () => {
    const doc = minimal();
    doc.variants[0] = { name: 'a', instanceClass: 'db.r6g.large', readers: 1, writeForwarding: { enabled: true } };
    expect(() => validateSpec(doc)).not.toThrow();
  });
});

describe('parameter values on one line', () => {
  it.each([
    ['clusterParameters', 'a\nb'],
    ['instanceParameters', 'x\r'],
    ['localOnlyParameters', 'pool-of-threads\n[mariadbd]\ninit_file=/tmp/x'],
  ])('refuses a control character in a %s value by its JSON path', (where, value) => {
    // Arrange
    const doc = minimal();
    doc.variants[0] = { ...doc.variants[0]!, [where]: { some_parameter: value } };

    // Act
    const problems = problemsOf(doc);

    // Assert
    expect(problems.map((p) => p.path)).toEqual([`variants[0].${where}.some_parameter`]);
    expect(problems[0]!.message).toMatch(/one line/);
  });
});

describe('unknown parameter names', () => {
  it.each([
    ['clusterParameters', 'innodb_bogus_setting'],
    ['instanceParameters', 'max_conections'],
  ] as const)('refuses %s.%s by its path', (field, name) => {
    const doc = minimal();
    doc.variants[0] = { name: 'a', instanceClass: 'db.r6g.large', [field]: { [name]: 1 } };
    expect(problemsOf(doc)).toEqual([
      { path: `variants[0].${field}.${name}`, message: expect.stringMatching(/^unknown to Aurora MySQL 3/) as string },
    ]);
  });
});

describe('workload script paths stay in the spec folder or client/workloads', () => {
  function specWithScript(script: string, at = dir): string {
    const file = join(at, 'exp.json');
    writeFileSync(file, JSON.stringify({ ...minimal(), workloads: [{ name: 'lua', script }] }));
    return file;
  }

  it.each([
    ['../../etc/passwd', /not a Lua file/],
    ['../outside.lua', /leaves the spec's folder/],
    ['sub/../../outside.lua', /leaves the spec's folder/],
    ['/tmp/anything.lua', /absolute path/],
  ])('refuses %s without reading it', (script, message) => {
    // Arrange: the file outside exists, so only the refusal can keep it out.
    writeFileSync(join(dir, '..', 'outside.lua'), 'function event() end\n');
    const inner = join(dir, 'inner');
    mkdirSync(inner);
    // Act
    const { problems } = fileProblems(specWithScript(script, inner));
    // Assert
    expect(problems).toEqual([{ path: 'workloads[0].script', message: expect.stringMatching(message) as string }]);
  });

  it('does not follow a symbolic link out of the spec folder', () => {
    // Arrange
    const outside = mkdtempSync(join(tmpdir(), 'ab-outside-'));
    alsoMade.push(outside);
    writeFileSync(join(outside, 'secret.lua'), 'secret\n');
    symlinkSync(join(outside, 'secret.lua'), join(dir, 'linked.lua'));
    // Act
    const { problems } = fileProblems(specWithScript('linked.lua'));
    // Assert
    expect(problems).toEqual([
      {
        path: 'workloads[0].script',
        message: expect.stringMatching(/not found next to the spec.*link out of the spec's folder/) as string,
      },
    ]);
  });

  it('reads a script in a sub-folder of the spec, and a shipped one by name', () => {
    mkdirSync(join(dir, 'lua'));
    writeFileSync(join(dir, 'lua', 'mine.lua'), 'function event() end\n');
    expect(Object.keys(loadSpecFile(specWithScript('lua/mine.lua'), BUILTIN).scripts)).toEqual(['mine.lua']);
    expect(Object.keys(loadSpecFile(specWithScript('fullscan_1kb.lua'), BUILTIN).scripts)).toEqual([
      'fullscan_1kb.lua',
    ]);
  });
});

describe('duplicates', () => {
  it.each([
    ['threads', [4, 8, 4], 'workloads[0].threads[2]'],
    ['rates', [100, 100], 'workloads[0].rates[1]'],
  ] as const)('refuses a value listed twice in %s (two steps with one id)', (key, values, path) => {
    const doc = minimal();
    doc.workloads[0] = { name: 'rw', test: 'oltp_read_write', [key]: values };
    expect(problemsOf(doc)).toEqual([
      { path, message: expect.stringMatching(/is listed twice .*both would be the step "rw-[tr]\d+"/) as string },
    ]);
  });

  it('refuses duplicate JSON keys at any depth, with their paths and lines', () => {
    // Arrange
    const file = writeText(
      'dup.json',
      '{\n  "name": "a",\n  "name": "b",\n  "data": {"tables": 1, "tables": 2, "tableSize": 1}\n}\n',
    );
    // Act
    const { problems } = fileProblems(file);
    // Assert
    expect(problems).toEqual([
      {
        path: 'name',
        message:
          'duplicate key "name" at line 3, column 3 (first at line 2, column 3): JSON keeps only ' +
          'the last, so remove one',
      },
      { path: 'data.tables', message: expect.stringMatching(/^duplicate key "tables" at line 4, column 25/) as string },
    ]);
  });

  it('refuses duplicate YAML keys', () => {
    const file = writeText('dup.yaml', 'name: a\nname: b\n');
    expect(fileProblems(file).problems[0]!.message).toMatch(/not valid YAML: Map keys must be unique/);
  });
});

describe('reportIntervalS and durationS', () => {
  it('refuses a workload interval longer than its duration', () => {
    const doc = minimal();
    doc.workloads[0] = { name: 'rw', test: 'oltp_read_write', durationS: 5, reportIntervalS: 10 };
    expect(problemsOf(doc)).toEqual([
      {
        path: 'workloads[0].reportIntervalS',
        message: expect.stringMatching(/reportIntervalS 10 is longer than durationS 5 .*at most 5/) as string,
      },
    ]);
  });

  it('names defaults.reportIntervalS when the default is what is too long', () => {
    const doc = { ...minimal(), defaults: { durationS: 60, reportIntervalS: 30 } };
    doc.workloads[0] = { name: 'rw', test: 'oltp_read_write', durationS: 10 };
    expect(problemsOf(doc).map((p) => p.path)).toEqual(['defaults.reportIntervalS']);
  });
});

describe('sizes', () => {
  it('refuses a spec that expands past the step limit, saying the count, the limit and why', () => {
    // Arrange: 50 variants x 100 repeats x 3 steps = 15,000 steps
    const doc = minimal();
    doc.variants = Array.from({ length: 50 }, (_, i) => ({ name: `v${i}`, instanceClass: 'db.r6g.large' }));
    doc.repeats = 100;
    doc.workloads[0] = { name: 'rw', test: 'oltp_read_write', threads: [1, 2, 4] };
    // Act
    const problems = problemsOf(doc);
    // Assert
    expect(MAX_STEPS_PER_RUN).toBe(10_000);
    expect(problems).toEqual([
      {
        path: 'workloads',
        message: expect.stringMatching(/expands to 15,000 steps .* at most 10,000, about 8 hours/) as string,
      },
    ]);
  });

  it('refuses a sweep of more than 100 values', () => {
    const doc = minimal();
    doc.workloads[0] = { name: 'rw', test: 'oltp_read_write', threads: Array.from({ length: 101 }, (_, i) => i + 1) };
    expect(problemsOf(doc).map((p) => p.path)).toEqual(['workloads[0].threads']);
  });

  it('refuses a file larger than 1 MiB without parsing it', () => {
    const file = writeText('big.json', ' '.repeat(MAX_SPEC_BYTES + 1));
    expect(fileProblems(file).problems[0]!.message).toMatch(
      /^the file is 1048577 bytes; a spec may be at most 1048576 bytes \(1 MiB\)/,
    );
  });

  it('refuses nesting deeper than any spec needs instead of overflowing the stack', () => {
    const file = writeText('deep.json', '['.repeat(100_000));
    expect(fileProblems(file).problems[0]!.message).toMatch(/nested deeper than 64 levels/);
  });
});

describe('syntax, binary input, nulls and comments', () => {
  it.each([
    ['{\n  "name": "a",\n  "data": }\n', 'line 3, column 11', /expected a value/],
    ['{\n  "name": "a",\n}\n', 'line 3, column 1', /trailing comma/],
    ['{"name": \'a\'}', 'line 1, column 10', /double quotes/],
    ['{"name": "a"} x', 'line 1, column 15', /after the end of the document/],
    ['{"name": "a', 'line 1, column 10', /never closed/],
    ['{"threads": [1 2]}', 'line 1, column 16', /expected ',' or '\]' after an array element, found '2'/],
    ['{"name": "a" "data": {}}', 'line 1, column 14', /expected ',' or '\}' after a property value/],
    ['{"name": "a\tb"}', 'line 1, column 10', /control character inside a string/],
  ])('says line and column of a JSON syntax error (%#)', (text, where, what) => {
    const { problems } = fileProblems(writeText('syntax.json', text));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toContain(`not valid JSON at ${where}`);
    expect(problems[0]!.message).toMatch(what);
  });

  it.each([
    [
      'NUL bytes',
      Buffer.from([0x7b, 0x00, 0x01, 0x1b, 0x5b, 0x32, 0x4a, 0x7d]),
      /not a text file \(a NUL byte at offset 1\)/,
    ],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x1b, 0x5b, 0x32, 0x4a, 0x7d]), /not UTF-8 text/],
    ['a terminal escape in JSON', Buffer.from('{"name": \u001b[2J}', 'utf8'), /found U\+001B/],
  ])('refuses %s without echoing the content', (_what, bytes, message) => {
    // Act
    const { message: text, problems } = fileProblems(writeText('binary.json', bytes));
    // Assert: the message names the problem and carries no control character of the input
    expect(problems[0]!.message).toMatch(message);
    expect(hasControlCharacter(text)).toBe(false);
  });

  it('says which types a parameter value may have when it is null', () => {
    const doc = minimal();
    (doc.variants[0] as Record<string, unknown>)['clusterParameters'] = { sync_binlog: null };
    expect(problemsOf(doc)).toEqual([
      { path: 'variants[0].clusterParameters.sync_binlog', message: 'expected string, number or boolean, got null' },
    ]);
  });

  it.each(['// a comment\n{}', '{ /* block */ }'])('says that comments need YAML or JSONC (%#)', (text) => {
    const { problems } = fileProblems(writeText('commented.json', text));
    expect(problems[0]!.message).toMatch(
      /JSON has no comments; write the spec as YAML \(\.yaml, "# comment"\) or JSONC \(\.jsonc, "\/\/ comment"\)/,
    );
  });

  it('reads a .jsonc spec with comments', () => {
    const text =
      `// the quickstart, ` +
      `commented\n${JSON.stringify(minimal(), null, 2).replace('"name": "tiny",', '"name": "tiny", /* which */')}`;
    expect(loadSpecFile(writeText('commented.jsonc', text), BUILTIN).spec.name).toBe('tiny');
  });

  it('parses what JSON.parse parses, to the same value', () => {
    const text = JSON.stringify({ a: [1, -2.5e3, true, null, 'é\n"\\u0041'], b: { c: {} }, __proto__: 1 });
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
  });
});
