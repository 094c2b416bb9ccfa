/**
 * Reading a spec file's text before the schema sees it: a size limit, binary content refused without
 * echoing it, and a strict JSON parser that says line and column (JSON.parse says a byte position,
 * and quotes the input, which for a binary file means garbage on the terminal), refuses duplicate
 * keys (JSON.parse silently keeps the last one, so a spec could mean something else than it reads)
 * and names comments as what they are: JSON has none; YAML (.yaml) and JSONC (.jsonc) do.
 */

/**
 * Why 1 MiB: the largest shipped experiment is a few KB; a spec that large is not one a person
 * wrote, and the whole spec travels in the state machine's input (Step Functions: 256 KiB per
 * state input or output), so a bigger one could not run anyway.
 */
export const MAX_SPEC_BYTES = 1024 * 1024;

export interface TextProblem {
  readonly path: string;
  readonly message: string;
}

export class SpecTextError extends Error {
  constructor(readonly problems: readonly TextProblem[]) {
    super(problems.map((p) => `${p.path || '(root)'}: ${p.message}`).join('; '));
  }
}

/** The file's bytes as text, or a problem: too large, binary (NUL byte), or not UTF-8. Nothing of the content is quoted. */
export function specBytesToText(bytes: Uint8Array): string {
  if (bytes.length > MAX_SPEC_BYTES) {
    throw new SpecTextError([
      {
        path: '',
        message: `the file is ${bytes.length} bytes; a spec may be at most ${MAX_SPEC_BYTES} bytes (1 MiB): the whole spec travels in the workflow's input, which Step Functions limits to 256 KiB per state`,
      },
    ]);
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw new SpecTextError([{ path: '', message: `not a text file (a NUL byte at offset ${nul}): an experiment is JSON or YAML text` }]);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SpecTextError([{ path: '', message: 'not UTF-8 text: an experiment is JSON or YAML text in UTF-8' }]);
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A character for a message: printable ASCII quoted, anything else as its code point (never raw bytes). */
function showChar(ch: string | undefined): string {
  if (ch === undefined) return 'the end of the file';
  const code = ch.codePointAt(0)!;
  if (code >= 0x20 && code < 0x7f) return `'${ch}'`;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Nesting a spec could need is < 10 levels; deeper input is refused before recursion can overflow the stack. */
const MAX_DEPTH = 64;

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

class JsonScanner {
  private pos = 0;
  readonly duplicates: TextProblem[] = [];

  constructor(
    private readonly text: string,
    private readonly allowComments: boolean,
  ) {}

  private where(at: number = this.pos): string {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at && i < this.text.length; i++) {
      if (this.text[i] === '\n') {
        line++;
        lineStart = i + 1;
      }
    }
    return `line ${line}, column ${at - lineStart + 1}`;
  }

  private fail(message: string, at: number = this.pos): never {
    throw new SpecTextError([{ path: '', message: `not valid JSON at ${this.where(at)}: ${message}` }]);
  }

  private skip(): void {
    for (;;) {
      const ch = this.text[this.pos];
      if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
        this.pos++;
        continue;
      }
      if (ch === '/' && (this.text[this.pos + 1] === '/' || this.text[this.pos + 1] === '*')) {
        if (!this.allowComments) {
          this.fail('JSON has no comments; write the spec as YAML (.yaml, "# comment") or JSONC (.jsonc, "// comment"), or remove the comment');
        }
        if (this.text[this.pos + 1] === '/') {
          const end = this.text.indexOf('\n', this.pos);
          this.pos = end < 0 ? this.text.length : end;
        } else {
          const end = this.text.indexOf('*/', this.pos + 2);
          if (end < 0) this.fail('a /* comment is never closed');
          this.pos = end + 2;
        }
        continue;
      }
      return;
    }
  }

  parseDocument(): JsonValue {
    this.skip();
    const value = this.value([]);
    this.skip();
    if (this.pos < this.text.length) this.fail(`unexpected ${showChar(this.text[this.pos])} after the end of the document`);
    return value;
  }

  private value(path: readonly (string | number)[]): JsonValue {
    if (path.length > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels (a spec needs fewer than 10)`);
    const ch = this.text[this.pos];
    if (ch === '{') return this.object(path);
    if (ch === '[') return this.array(path);
    if (ch === '"') return this.string();
    const literal = /true|false|null/y;
    literal.lastIndex = this.pos;
    const word = literal.exec(this.text);
    if (word) {
      this.pos += word[0].length;
      return word[0] === 'null' ? null : word[0] === 'true';
    }
    const number = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    number.lastIndex = this.pos;
    const num = number.exec(this.text);
    if (num) {
      this.pos += num[0].length;
      return Number(num[0]);
    }
    if (ch === "'") this.fail(`strings take double quotes in JSON, found ${showChar(ch)}`);
    return this.fail(`expected a value (object, array, string, number, true, false or null), found ${showChar(ch)}`);
  }

  private string(): string {
    const start = this.pos;
    this.pos++;
    for (;;) {
      const ch = this.text[this.pos];
      if (ch === undefined) this.fail('a string is never closed', start);
      if (ch === '"') break;
      if (ch === '\\') {
        const esc = this.text[this.pos + 1];
        if (esc === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.pos + 2, this.pos + 6))) this.fail('a \\u escape needs four hex digits');
          this.pos += 6;
          continue;
        }
        if (esc === undefined || !'"\\/bfnrt'.includes(esc)) this.fail(`invalid escape \\${esc === undefined ? '' : showChar(esc)} in a string`);
        this.pos += 2;
        continue;
      }
      if (ch.charCodeAt(0) < 0x20) this.fail(`a control character (${showChar(ch)}) inside a string: write it as an escape such as \\n`);
      this.pos++;
    }
    this.pos++;
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  private expect(ch: string, what: string): void {
    this.skip();
    if (this.text[this.pos] !== ch) this.fail(`expected ${what}, found ${showChar(this.text[this.pos])}`);
    this.pos++;
  }

  private object(path: readonly (string | number)[]): JsonValue {
    this.pos++;
    const entries: [string, JsonValue][] = [];
    const seen = new Map<string, number>();
    this.skip();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return {};
    }
    for (;;) {
      this.skip();
      const keyAt = this.pos;
      if (this.text[this.pos] !== '"') {
        if (this.text[this.pos] === '}') this.fail('a trailing comma before } (JSON allows none)');
        this.fail(`expected a property name in double quotes, found ${showChar(this.text[this.pos])}`);
      }
      const key = this.string();
      const first = seen.get(key);
      if (first !== undefined) {
        this.duplicates.push({
          path: pathText([...path, key]),
          message: `duplicate key "${key}" at ${this.where(keyAt)} (first at ${this.where(first)}): JSON keeps only the last, so remove one`,
        });
      } else {
        seen.set(key, keyAt);
      }
      this.expect(':', "':' after a property name");
      this.skip();
      entries.push([key, this.value([...path, key])]);
      this.skip();
      const next = this.text[this.pos];
      if (next === ',') {
        this.pos++;
        continue;
      }
      if (next === '}') {
        this.pos++;
        break;
      }
      this.fail(`expected ',' or '}' after a property value, found ${showChar(next)}`);
    }
    // fromEntries defines own properties: a "__proto__" key stays a key, as with JSON.parse.
    return Object.fromEntries(entries);
  }

  private array(path: readonly (string | number)[]): JsonValue {
    this.pos++;
    const items: JsonValue[] = [];
    this.skip();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return items;
    }
    for (;;) {
      this.skip();
      if (this.text[this.pos] === ']') this.fail('a trailing comma before ] (JSON allows none)');
      items.push(this.value([...path, items.length]));
      this.skip();
      const next = this.text[this.pos];
      if (next === ',') {
        this.pos++;
        continue;
      }
      if (next === ']') {
        this.pos++;
        break;
      }
      this.fail(`expected ',' or ']' after an array element, found ${showChar(next)}`);
    }
    return items;
  }
}

function pathText(path: readonly (string | number)[]): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out === '' ? seg : `.${seg}`;
  return out;
}

/**
 * JSON (or JSONC with `allowComments`) to a value. Throws SpecTextError: a syntax error with line and
 * column, or every duplicate key by JSON path.
 */
export function parseStrictJson(text: string, options: { allowComments?: boolean } = {}): unknown {
  const scanner = new JsonScanner(text, options.allowComments === true);
  const value = scanner.parseDocument();
  if (scanner.duplicates.length > 0) throw new SpecTextError(scanner.duplicates);
  return value;
}
