/**
 * RDS parameter formulas, as parameter groups accept them. See Aurora User Guide, "Specifying DB parameters".
 * Arithmetic is integer, so each * and / truncates. log is base 2.
 */

export type FormulaVariables = Readonly<Record<string, number | undefined>>;

export class FormulaError extends Error {
  override readonly name = 'FormulaError';
}

export function isFormula(value: string): boolean {
  return /[{}]/.test(value) || /^\s*(GREATEST|LEAST|SUM|IF)\s*\(/.test(value);
}

type Token = { kind: 'num'; value: number } | { kind: 'id'; value: string } | { kind: 'op'; value: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (/[0-9.]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?/.exec(text.slice(i))!;
      tokens.push({ kind: 'num', value: Number(m[0]) });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))!;
      tokens.push({ kind: 'id', value: m[0] });
      i += m[0].length;
    } else if ('{}()*/,+-'.includes(c)) {
      tokens.push({ kind: 'op', value: c });
      i++;
    } else {
      throw new FormulaError(`unexpected "${c}" at position ${i + 1}`);
    }
  }
  return tokens;
}

/** Evaluates an RDS parameter formula with the given variables. FormulaError names what is wrong. */
export function evaluateFormula(text: string, variables: FormulaVariables): number {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = () => tokens[pos];
  const expectOp = (op: string) => {
    const t = tokens[pos];
    if (!t || t.kind !== 'op' || t.value !== op)
      throw new FormulaError(`expected "${op}" ${t ? `but found "${t.value}"` : 'at the end'}`);
    pos++;
  };

  // sum := product (('+'|'-') product)*
  // RDS documents only * and /, but accepts + and - too.
  const sum = (): number => {
    let v = product();
    for (let t = peek(); t && t.kind === 'op' && (t.value === '+' || t.value === '-'); t = peek()) {
      pos++;
      v = t.value === '+' ? v + product() : v - product();
    }
    return v;
  };
  const product = (): number => {
    let v = primary();
    for (let t = peek(); t && t.kind === 'op' && (t.value === '*' || t.value === '/'); t = peek()) {
      pos++;
      const rhs = primary();
      if (t.value === '/' && rhs === 0) throw new FormulaError('division by zero');
      v = Math.trunc(t.value === '*' ? v * rhs : v / rhs);
    }
    return v;
  };
  const args = (): number[] => {
    expectOp('(');
    const list = [sum()];
    while (peek()?.kind === 'op' && peek()!.value === ',') {
      pos++;
      list.push(sum());
    }
    expectOp(')');
    return list;
  };
  const primary = (): number => {
    const t = tokens[pos++];
    if (!t) throw new FormulaError('unexpected end of formula');
    if (t.kind === 'num') return t.value;
    if (t.kind === 'op' && (t.value === '{' || t.value === '(')) {
      const v = sum();
      expectOp(t.value === '{' ? '}' : ')');
      return v;
    }
    if (t.kind === 'op' && t.value === '-') return -primary();
    if (t.kind === 'id') {
      switch (t.value) {
        case 'GREATEST':
          return Math.max(...args());
        case 'LEAST':
          return Math.min(...args());
        case 'SUM':
          return args().reduce((a, b) => a + b, 0);
        case 'IF': {
          const a = args();
          if (a.length !== 3) throw new FormulaError('IF takes three arguments');
          return a[0] !== 0 ? a[1]! : a[2]!;
        }
        case 'log': {
          const a = args();
          if (a.length !== 1 || a[0]! <= 0) throw new FormulaError('log takes one positive argument');
          return Math.log2(a[0]!);
        }
        default: {
          if (!(t.value in variables)) throw new FormulaError(`unknown variable or function "${t.value}"`);
          const v = variables[t.value];
          if (v === undefined) throw new FormulaError(`${t.value} has no local value`);
          return v;
        }
      }
    }
    throw new FormulaError(`unexpected "${t.value}"`);
  };

  const value = sum();
  if (pos < tokens.length) throw new FormulaError(`unexpected "${tokens[pos]!.value}" after the end of the formula`);
  return Math.trunc(value);
}
