/**
 * A FATAL line quoting a failed statement keeps the statement's start, not its kilobytes: sysbench
 * prints the whole query (`%s returned error %u (%s) for query '%s'`, src/drivers/mysql/drv_mysql.c),
 * and a prepare's INSERT carries its batch of rows; the reason goes into the lake and the terminal.
 */
import { parseSysbenchOutput } from '../../core/sysbench/parser';

const rows = Array.from(
  { length: 100 },
  (_, i) => `(${i}, 4993, '83868641912-28773972837-60736120486-75162659906-27563526494', '67847967377-48000963322')`,
).join(',');
const insert = `INSERT INTO sbtest1(k, c, pad) VALUES${rows}`;

describe('FATAL lines with a long statement', () => {
  it("keep the error and the statement's first 120 characters, saying how long it was", () => {
    // Arrange
    const log = [
      'sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)',
      '',
      "Creating table 'sbtest1'...",
      `FATAL: mysql_drv_query() returned error 1114 (The table 'sbtest1' is full) for query '${insert}'`,
      "FATAL: `sysbench.cmdline.call_command' function failed: ./oltp_common.lua:230: SQL error, errno = 1114, " +
        "state = 'HY000': The table 'sbtest1' is full",
    ].join('\n');
    // Act
    const parsed = parseSysbenchOutput(log, { exitCode: 1 });
    // Assert
    expect(insert.length).toBeGreaterThan(8_000);
    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe(
      `mysql_drv_query() returned error 1114 (The table 'sbtest1' is full) for query ` +
        `'${insert.slice(0, 120)}...' (a statement of ${insert.length} characters); ` +
        "`sysbench.cmdline.call_command' function failed: ./oltp_common.lua:230: SQL error, errno = 1114, " +
        "state = 'HY000': The table 'sbtest1' is full",
    );
  });

  it('a line sysbench cut before the closing quote is clipped the same way', () => {
    // Arrange: sysbench's log buffer ends the line inside the statement
    const cut = `mysql_drv_query() returned error 1114 (The table 'sbtest1' is full) for query '${insert}`.slice(
      0,
      4095,
    );
    // Act
    const error = parseSysbenchOutput(`sysbench 1.0.20\nFATAL: ${cut}\n`, { exitCode: 1 }).error;
    // Assert
    expect(error).toBe(
      `mysql_drv_query() returned error 1114 (The table 'sbtest1' is full) for query ` +
        `'${insert.slice(0, 120)}...' (a statement of at least ${4095 - cut.indexOf(" for query '") - 12} characters)`,
    );
  });

  it('a short statement, and the pgsql form with its connection, are kept whole', () => {
    // Arrange
    const log =
      "sysbench 1.0.20\nFATAL: pgsql_drv_query() returned error 1 (gone) for query 'SELECT 1' on connection 0\n";
    // Act / Assert
    expect(parseSysbenchOutput(log, { exitCode: 1 }).error).toBe(
      "pgsql_drv_query() returned error 1 (gone) for query 'SELECT 1' on connection 0",
    );
  });
});
