import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UnsupportedOnBackendError } from '../../core/backend';
import {
  cpuListFor,
  formatBytes,
  INSTANCE_CLASSES,
  localMemoryCap,
  localShape,
} from '../../core/backends/local/instance-classes';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** The machine this project is developed on: 2 CPUs, 24 GiB. */
const HOST = { cpus: 2, memoryBytes: 24 * GiB };

describe('instance class table', () => {
  it('has every size large..16xlarge of r5, r6g, r6i and r7g, and the t3/t4g classes', () => {
    // Arrange
    const sizes = ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge'];
    const expected = [
      ...['r5', 'r6g', 'r6i', 'r7g'].flatMap((f) => sizes.map((s) => `db.${f}.${s}`)),
      'db.t3.medium',
      'db.t3.large',
      'db.t4g.medium',
      'db.t4g.large',
    ];

    // Act
    const missing = expected.filter((c) => INSTANCE_CLASSES[c] === undefined);

    // Assert
    expect(missing).toEqual([]);
  });

  it('records vCPU, memory and Aurora default max_connections per class', () => {
    // Arrange / Act
    const large = INSTANCE_CLASSES['db.r6g.large'];
    const x2 = INSTANCE_CLASSES['db.r5.2xlarge'];
    const t3 = INSTANCE_CLASSES['db.t3.medium'];

    // Assert
    expect(large).toEqual({ vcpu: 2, memoryGiB: 16, maxConnections: 1000 });
    expect(x2).toEqual({ vcpu: 8, memoryGiB: 64, maxConnections: 3000 });
    expect(t3).toEqual({ vcpu: 2, memoryGiB: 4, maxConnections: 90 });
  });
});

describe('localShape', () => {
  it('scales memory by 1/64 and gives the buffer pool 3/4 of it', () => {
    // Act
    const shape = localShape('db.r6g.large', HOST);

    // Assert
    expect(shape.localMemoryBytes).toBe(256 * MiB);
    expect(shape.bufferPoolBytes).toBe(192 * MiB);
    expect(shape.memoryScale).toBeCloseTo(1 / 64);
    expect(shape.maxConnections).toBe(1000);
  });

  it('keeps larger classes larger until the per-server cap (host memory / 8)', () => {
    // Act
    const pools = ['large', 'xlarge', '2xlarge', '4xlarge'].map((s) => localShape(`db.r6i.${s}`, HOST).bufferPoolBytes);
    const capped = localShape('db.r5.24xlarge', HOST);

    // Assert
    expect(pools).toEqual([192 * MiB, 384 * MiB, 768 * MiB, 1536 * MiB]);
    expect(localMemoryCap(HOST)).toBe(3 * GiB);
    expect(capped.localMemoryBytes).toBe(3 * GiB);
    expect(capped.bufferPoolBytes).toBe(2304 * MiB);
  });

  it('gives small classes at least 64 MiB', () => {
    // Act
    const shape = localShape('db.t3.small', HOST);

    // Assert
    expect(shape.localMemoryBytes).toBe(64 * MiB);
    expect(shape.bufferPoolBytes).toBe(48 * MiB);
  });

  it('uses min(vCPU, host CPUs) cores', () => {
    // Act
    const onSmallHost = localShape('db.r6g.4xlarge', HOST);
    const onBigHost = localShape('db.r6g.xlarge', { cpus: 32, memoryBytes: 128 * GiB });

    // Assert
    expect(onSmallHost.cores).toBe(2);
    expect(onBigHost.cores).toBe(4);
  });

  it.each(['db.m5.large', 'db.r6g.64xlarge', 'db.x2g.large'])('refuses an unknown class %s, naming it', (cls) => {
    // Act
    const act = () => localShape(cls, HOST);

    // Assert
    expect(act).toThrow(UnsupportedOnBackendError);
    expect(act).toThrow(cls);
  });
});

describe('cpuListFor', () => {
  it('gives the writer and each reader their own CPUs when the host has enough', () => {
    // Act
    const lists = [0, 1, 2].map((slot) => cpuListFor(2, slot, 8));

    // Assert
    expect(lists).toEqual(['0,1', '2,3', '4,5']);
  });

  it('wraps around the host CPUs', () => {
    // Act
    const list = cpuListFor(4, 1, 6);

    // Assert
    expect(list).toBe('0,1,4,5');
  });

  it('does not pin a server that may use every CPU anyway', () => {
    // Act / Assert
    expect(cpuListFor(2, 0, 2)).toBeUndefined();
    expect(cpuListFor(16, 1, 2)).toBeUndefined();
  });
});

describe('docs/local-backend.md', () => {
  it('has the class table the code computes (for a 2-CPU, 24 GiB host)', () => {
    // Arrange
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'local-backend.md'), 'utf8');
    const rows = doc
      .split('\n')
      .filter((l) => /^\| (r|t)[0-9]/.test(l))
      .map((l) =>
        l
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim()),
      );

    // Act
    const documented = rows.flatMap(([families, size, ...cells]) =>
      families!.split(', ').map((f) => [`db.${f}.${size}`, cells.join(' | ')]),
    );
    const computed = documented.map(([cls]) => {
      const s = localShape(cls!, HOST);
      return [
        cls,
        [
          s.vcpu,
          `${s.memoryGiB} GiB`,
          s.maxConnections,
          s.cores,
          formatBytes(s.localMemoryBytes),
          formatBytes(s.bufferPoolBytes),
        ].join(' | '),
      ];
    });

    // Assert
    expect(documented.length).toBe(Object.keys(INSTANCE_CLASSES).length);
    expect(documented).toEqual(computed);
  });
});
