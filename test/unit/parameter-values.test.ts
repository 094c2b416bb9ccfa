/**
 * A parameter value against RDS's DataType and AllowedValues (core/backends/aws/parameter-values.ts),
 * with AllowedValues as the Aurora User Guide's DescribeDBClusterParameters output shows them:
 * ranges "8192-536870912", lists "0,1" / "ROW,STATEMENT,MIXED,OFF", and formulas RDS evaluates.
 */
import { isRdsExpression, parseAllowedValues, valueProblem } from '../../core/backends/aws/parameter-values';

describe('AllowedValues', () => {
  it('splits literals and inclusive ranges, negative and decimal bounds included', () => {
    expect(parseAllowedValues('8192-536870912')).toEqual({ literals: [], ranges: [{ min: '8192', max: '536870912' }] });
    expect(parseAllowedValues('ROW, STATEMENT,MIXED')).toEqual({ literals: ['ROW', 'STATEMENT', 'MIXED'], ranges: [] });
    expect(parseAllowedValues('-1-65535,0.5-1.5')).toEqual({
      literals: [],
      ranges: [
        { min: '-1', max: '65535' },
        { min: '0.5', max: '1.5' },
      ],
    });
    expect(parseAllowedValues(undefined)).toEqual({ literals: [], ranges: [] });
  });

  it('checks integers exactly, beyond double precision', () => {
    const rule = { DataType: 'integer', AllowedValues: '5242880-18446744073709551615' };
    expect(valueProblem('18446744073709551615', rule)).toBeUndefined();
    expect(valueProblem('18446744073709551616', rule)).toBe(
      '"18446744073709551616" is not allowed (allowed: 5242880 to 18446744073709551615)',
    );
    expect(valueProblem('4096', rule)).toMatch(/not allowed/);
    expect(valueProblem('1.5', rule)).toBe('"1.5" is not an integer (DataType integer)');
  });

  it('takes RDS formulas, log expressions and functions for numeric parameters without a range check', () => {
    const rule = { DataType: 'integer', AllowedValues: '1-100' };
    for (const v of [
      '{DBInstanceClassMemory*3/4}',
      '{log(DBInstanceClassMemory/8187281418)*1000}',
      'LEAST({DBInstanceClassMemory/393040}, 20000)',
      'GREATEST(1, 2)',
    ]) {
      expect(isRdsExpression(v)).toBe(true);
      expect(valueProblem(v, rule)).toBeUndefined();
    }
    expect(isRdsExpression('ROW')).toBe(false);
  });

  it('checks booleans, enumerations (any case) and list subsets', () => {
    expect(valueProblem('1', { DataType: 'boolean', AllowedValues: '0,1' })).toBeUndefined();
    expect(valueProblem('ON', { DataType: 'boolean', AllowedValues: '0,1' })).toBe(
      '"ON" is not allowed (allowed: "0", "1")',
    );
    expect(valueProblem('row', { DataType: 'string', AllowedValues: 'ROW,STATEMENT,MIXED,OFF' })).toBeUndefined();
    expect(
      valueProblem('STRICT_TRANS_TABLES,ANSI_QUOTES', {
        DataType: 'list',
        AllowedValues: 'ANSI_QUOTES,STRICT_TRANS_TABLES,NO_ZERO_DATE',
      }),
    ).toBeUndefined();
    expect(
      valueProblem('STRICT_TRANS_TABLES,NOPE', { DataType: 'list', AllowedValues: 'ANSI_QUOTES,STRICT_TRANS_TABLES' }),
    ).toBe('"NOPE" not among the allowed values ("ANSI_QUOTES", "STRICT_TRANS_TABLES")');
  });

  it('accepts anything for a string without AllowedValues, and checks decimals against decimal ranges', () => {
    expect(valueProblem('anything at all', { DataType: 'string' })).toBeUndefined();
    expect(valueProblem('0.5', { DataType: 'float', AllowedValues: '0-31536000' })).toBeUndefined();
    expect(valueProblem('-0.5', { DataType: 'float', AllowedValues: '0-31536000' })).toMatch(/not allowed/);
    expect(valueProblem('abc', { DataType: 'float', AllowedValues: '0-31536000' })).toBe(
      '"abc" is not a number (DataType float)',
    );
  });
});
