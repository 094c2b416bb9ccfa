/**
 * scripts/build-aurora-parameter-catalogue.ts: how AWS's markdown reference (pipe tables in
 * awsdocs/amazon-aurora-user-guide, escaped with backslashes) turns into catalogue entries. The
 * samples below are rows in the shape the reference page has them.
 */
import { applyAmendments, type Amendment } from '../../core/aurora/parameter-amendments';
import {
  allowedValuesIn,
  catalogueFromReference,
  checkCatalogue,
  modifiableFor,
  versionsOf,
} from '../../scripts/build-aurora-parameter-catalogue';

const REFERENCE = [
  '# Aurora MySQL configuration parameters<a name="AuroraMySQL.Reference.ParameterGroups"></a>',
  '',
  '## Cluster\\-level parameters<a name="AuroraMySQL.Reference.Parameters.Cluster"></a>',
  '',
  '| Parameter name | Modifiable | Notes | ',
  '| --- | --- | --- | ',
  '|  `innodb_flush_log_at_trx_commit`  |  Aurora MySQL version 2: Yes Aurora MySQL version 3: No  |  For ' +
    'Aurora MySQL version 3, Aurora always uses the default value of `1`\\.  | ',
  '|  `lower_case_table_names`  |  Yes \\(Aurora MySQL version 2\\) Only at cluster creation time \\(Aurora ' +
    'MySQL version 3\\)  |  Set permanently in version 3\\.  | ',
  '|  `internal_tmp_mem_storage_engine`  |   Yes   |  Allowed values are `MEMORY` and `TempTable`\\. This ' +
    'parameter applies to Aurora MySQL version 3\\.  | ',
  '|   `innodb_undo_logs`   |   Yes   |  Removed from Aurora MySQL version 3\\.  | ',
  '',
  '## Instance\\-level parameters<a name="AuroraMySQL.Reference.Parameters.Instance"></a>',
  '',
  '|  Parameter name  |  Modifiable  |  Notes  | ',
  '| --- | --- | --- | ',
  '|   `event_scheduler`   |  Sometimes  |  Indicates the status of the Event Scheduler\\. Modifiable only at ' +
    'the cluster level in Aurora MySQL version 3\\.  | ',
  '|   `slave_parallel_workers`   |   Yes   |   Aurora MySQL version 2\\. Use `replica_parallel_workers` in ' +
    'Aurora MySQL version 3\\.   | ',
  '|  `replica_parallel_workers`  |   Yes   |  Aurora MySQL version 3   | ',
  '|  `thread_handling`  |  No  |    | ',
  '',
  '## MySQL parameters that don\'t apply to Aurora MySQL<a name="AuroraMySQL.Reference.Parameters.Inapplicable"></a>',
  '',
  "+ `innodb_deadlock_detect` – This parameter doesn't apply to Aurora MySQL version 2\\. It is available in " +
    'Aurora MySQL version 3\\.',
  '+ `innodb_flush_method`',
  '',
  "## MySQL status variables that don't apply to Aurora MySQL",
  '',
].join('\n');

const WRITE_FORWARDING = [
  '## Configuration parameters for write forwarding<a name="aurora-global-database-write-forwarding-params"></a>',
  '',
  '|  Name  |  Scope  |  Type  |  Default value  |  Valid values  | ',
  '| --- | --- | --- | --- | --- | ',
  '|  aurora\\_fwd\\_writer\\_idle\\_timeout \\(Aurora MySQL version 3\\)  |  Global  |  unsigned integer  |  ' +
    '60  |  1–86,400  | ',
  "|  aurora\\_replica\\_read\\_consistency  |  Session  |  Enum  |  ''  |  EVENTUAL, SESSION, GLOBAL  | ",
  '',
].join('\n');

describe("building the parameter catalogue from AWS's reference", () => {
  it('reads which major versions a note limits a row to', () => {
    // Act / Assert
    expect(versionsOf('Removed from Aurora MySQL version 3.')).toEqual(['2']);
    expect(versionsOf('Aurora MySQL version 2. Use replica_checkpoint_group in Aurora MySQL version 3.')).toEqual([
      '2',
    ]);
    expect(versionsOf('Aurora MySQL version 2 only')).toEqual(['2']);
    expect(versionsOf('This parameter applies to Aurora MySQL version 3.')).toEqual(['3']);
    expect(versionsOf('Aurora MySQL version 3')).toEqual(['3']);
    expect(versionsOf('This parameter applies to Aurora MySQL version 2 and 3.')).toEqual(['2', '3']);
    expect(versionsOf('')).toEqual(['2', '3']);
  });

  it('reads the Modifiable column, including its per-version and creation-time forms', () => {
    // Act / Assert
    expect(modifiableFor('Aurora MySQL version 2: Yes Aurora MySQL version 3: No', '', 'cluster', '2')).toBe(true);
    expect(modifiableFor('Aurora MySQL version 2: Yes Aurora MySQL version 3: No', '', 'cluster', '3')).toBe(false);
    expect(
      modifiableFor(
        'Yes (Aurora MySQL version 2) Only at cluster creation time (Aurora MySQL version 3)',
        '',
        'cluster',
        '3',
      ),
    ).toBe('at-creation');
    expect(
      modifiableFor('Sometimes', 'Modifiable only at the cluster level in Aurora MySQL version 3.', 'instance', '3'),
    ).toBe(false);
    expect(
      modifiableFor('Yes', 'Removed at the instance level from Aurora MySQL version 3.', 'instance', '3'),
    ).toBeUndefined();
    expect(() => modifiableFor('Maybe', '', 'cluster', '3')).toThrow(/unexpected Modifiable cell "Maybe"/);
  });

  it('reads allowed values AWS spells out in a note', () => {
    // Act / Assert
    expect(allowedValuesIn('The allowed values are 0 and 1 (default). When set to 1, ...')).toEqual(['0', '1']);
    expect(allowedValuesIn('Allowed values are MEMORY and TempTable.')).toEqual(['MEMORY', 'TempTable']);
    expect(allowedValuesIn('Its value can be DYNAMIC, COMPACT, or REDUNDANT.')).toEqual([
      'DYNAMIC',
      'COMPACT',
      'REDUNDANT',
    ]);
    expect(allowedValuesIn('For more information, see ...')).toBeUndefined();
  });

  it(
    'turns the tables, the list of parameters that do not apply and the write forwarding table into ' +
      'per-version entries',
    () => {
      // Act
      const majors = catalogueFromReference(REFERENCE, WRITE_FORWARDING);
      // Assert
      const v2 = majors['2'].parameters;
      const v3 = majors['3'].parameters;
      expect(v2['innodb_flush_log_at_trx_commit']?.cluster?.modifiable).toBe(true);
      expect(v3['innodb_flush_log_at_trx_commit']?.cluster?.modifiable).toBe(false);
      expect(v3['lower_case_table_names']?.cluster?.modifiable).toBe('at-creation');
      expect(v3['internal_tmp_mem_storage_engine']?.allowedValues).toEqual(['MEMORY', 'TempTable']);
      expect(v2['internal_tmp_mem_storage_engine']).toBeUndefined();
      expect(v2['innodb_undo_logs']).toBeDefined();
      expect(v3['innodb_undo_logs']).toBeUndefined();
      expect(v3['event_scheduler']?.instance?.modifiable).toBe(false);
      expect(v2['event_scheduler']?.instance?.modifiable).toBe(true);
      expect(v2['slave_parallel_workers']?.otherName).toBe('replica_parallel_workers');
      expect(v3['replica_parallel_workers']?.otherName).toBe('slave_parallel_workers');
      expect(v3['thread_handling']?.instance).toEqual({ modifiable: false });
      expect(majors['2'].notApplicable).toEqual({
        innodb_deadlock_detect:
          "This parameter doesn't apply to Aurora MySQL version 2. It is available in Aurora MySQL version 3.",
        innodb_flush_method: '',
      });
      expect(majors['3'].notApplicable).toEqual({ innodb_flush_method: '' });
      expect(v3['aurora_fwd_writer_idle_timeout']).toMatchObject({
        cluster: { modifiable: true },
        range: { min: '1', max: '86400' },
      });
      expect(v2['aurora_fwd_writer_idle_timeout']).toBeUndefined();
      expect(v2['aurora_replica_read_consistency']?.allowedValues).toEqual(['EVENTUAL', 'SESSION', 'GLOBAL']);
    },
  );

  it('applies what AWS changed on the live page since, and removes what AWS now lists as not applying', () => {
    // Arrange
    const majors = catalogueFromReference(REFERENCE, WRITE_FORWARDING);
    const amendments: Amendment[] = [
      {
        majors: ['3'],
        name: 'innodb_flush_log_at_trx_commit',
        levels: { cluster: { modifiable: true } },
        allowedValues: ['0', '1', '2'],
        source: 'https://docs.aws.amazon.com/x',
      },
      { majors: ['2', '3'], name: 'innodb_undo_logs', notApplicable: '', source: 'https://docs.aws.amazon.com/x' },
    ];
    // Act
    applyAmendments(majors, amendments);
    // Assert
    expect(majors['3'].parameters['innodb_flush_log_at_trx_commit']).toMatchObject({
      cluster: { modifiable: true },
      allowedValues: ['0', '1', '2'],
      source: 'https://docs.aws.amazon.com/x',
    });
    expect(majors['2'].parameters['innodb_undo_logs']).toBeUndefined();
    expect(majors['2'].notApplicable['innodb_undo_logs']).toBe('');
  });

  it('fails the build when the reference contradicts what aurora-bench relies on', () => {
    // Arrange: a reference without the write forwarding parameters the AWS backend sets
    const majors = catalogueFromReference(REFERENCE, WRITE_FORWARDING);
    // Act / Assert
    expect(() => checkCatalogue(majors)).toThrow(
      /aurora_fwd_writer_max_connections_pct is a modifiable cluster parameter of Aurora MySQL 3/,
    );
  });
});
