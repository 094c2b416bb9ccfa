/**
 * Password literals in local SQL (core/backends/local/sql-client.ts): found in every MariaDB form the
 * code or a user writes, and redacted from error text, as written and as the server echoes them.
 */
import { passwordLiterals, redactSql, sqlString } from '../../core/backends/local/sql-client';

describe('password literals in SQL', () => {
  it('finds them after IDENTIFIED BY, MASTER_PASSWORD = and PASSWORD(, whatever their quoting', () => {
    // Arrange
    const sql = [
      `CREATE USER 'a'@'%' IDENTIFIED BY ${sqlString("it's, #1\\")};`,
      `ALTER USER b IDENTIFIED BY "dq\\"x";`,
      `GRANT USAGE ON *.* TO c IDENTIFIED BY PASSWORD '*0123456789ABCDEF';`,
      `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_USER='repl', MASTER_PASSWORD = 'r''epl', MASTER_PORT=3306;`,
      `SET PASSWORD FOR d = PASSWORD('old-pw');`,
    ].join('\n');

    // Act
    const literals = passwordLiterals(sql);

    // Assert: the user names, hosts and MASTER_USER are not taken for passwords.
    expect(literals).toEqual([sqlString("it's, #1\\"), '"dq\\"x"', "'*0123456789ABCDEF'", "'r''epl'", "'old-pw'"]);
  });

  it('redacts each literal from a message, with and without its quotes', () => {
    // Arrange
    const sql = "CHANGE MASTER TO MASTER_USER='repl', MASTER_PASSWORD='s3cret-pw' BOGUS";
    const message = "ERROR 1064 (42000) at line 1: ... near 's3cret-pw' BOGUS' (running: " + sql + ')';

    // Act
    const redacted = redactSql(message, sql);

    // Assert
    expect(redacted).not.toContain('s3cret-pw');
    expect(redacted).toContain("MASTER_USER='repl', MASTER_PASSWORD='***' BOGUS");
  });

  it('leaves SQL without a password as it is', () => {
    expect(redactSql("SELECT 'IDENTIFIED' FROM t WHERE password_col = 'x'")).toBe(
      "SELECT 'IDENTIFIED' FROM t WHERE password_col = 'x'",
    );
  });
});
