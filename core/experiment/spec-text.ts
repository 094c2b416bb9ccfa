/**
 * Reading a spec file's text before the schema sees it.
 * Binary content is refused without echoing it.
 * Strict JSON goes through jsonc-parser's visitor, so an error says line and column.
 * JSON.parse gives a byte position and quotes the input, which for a binary file is garbage.
 * Duplicate keys are refused, because JSON.parse keeps the last and a spec could mean other than it reads.
 * Comments are named as such. JSON has none, but YAML and JSONC do.
 */
import { printParseErrorCode, stripComments, visit, type JSONPath } from 'jsonc-parser';

/**
 * The largest shipped experiment is a few KB, so 1 MiB is no spec a person wrote.
 * The spec also travels in a Step Functions state input, limited to 256 KiB.
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

/** The file's bytes as text, or a problem. Nothing of the content is quoted. */
export function specBytesToText(bytes: Uint8Array): string {
  if (bytes.length > MAX_SPEC_BYTES) {
    throw new SpecTextError([
      {
        path: '',
        message:
          `the file is ${bytes.length} bytes; a spec may be at most ${MAX_SPEC_BYTES} bytes (1 MiB): ` +
          `the whole spec travels in the workflow's input, which Step Functions limits to 256 KiB per state`,
      },
    ]);
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0)
    throw new SpecTextError([
      { path: '', message: `not a text file (a NUL byte at offset ${nul}): an experiment is JSON or YAML text` },
    ]);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SpecTextError([{ path: '', message: 'not UTF-8 text: an experiment is JSON or YAML text in UTF-8' }]);
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A character for a message. Printable ASCII is quoted, anything else is its code point. */
function showChar(ch: string | undefined): string {
  if (ch === undefined) return 'the end of the file';
  const code = ch.codePointAt(0)!;
  if (code >= 0x20 && code < 0x7f) return `'${ch}'`;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * A spec needs fewer than 10 levels of nesting.
 * Deeper input is refused before the parser's recursion can overflow the stack.
 */
const MAX_DEPTH = 64;

type ErrorName = ReturnType<typeof printParseErrorCode>;

/** What went wrong at `offset`, in words. */
function syntaxMessage(code: ErrorName, text: string, offset: number, open: '{' | '[' | undefined): string {
  const ch = text[offset];
  const found = `found ${showChar(ch)}`;
  const before = text.slice(0, offset).trimEnd();
  if ((ch === '}' || ch === ']') && before.endsWith(',')) return `a trailing comma before ${ch} (JSON allows none)`;
  switch (code) {
    case 'InvalidCommentToken':
      return (
        'JSON has no comments; write the spec as YAML (.yaml, "# comment") or JSONC (.jsonc, "// ' +
        'comment"), or remove the comment'
      );
    case 'UnexpectedEndOfComment':
      return 'a /* comment is never closed';
    case 'UnexpectedEndOfString':
      return 'a string is never closed';
    case 'InvalidUnicode':
      return 'a \\u escape needs four hex digits';
    case 'InvalidEscapeCharacter':
      return 'invalid escape in a string';
    case 'InvalidCharacter':
      return `a control character inside a string: write it as an escape such as \\n`;
    case 'PropertyNameExpected':
      return `expected a property name in double quotes, ${found}`;
    case 'ColonExpected':
      return `expected ':' after a property name, ${found}`;
    case 'CommaExpected':
    case 'CloseBraceExpected':
    case 'CloseBracketExpected':
      return open === '['
        ? `expected ',' or ']' after an array element, ${found}`
        : `expected ',' or '}' after a property value, ${found}`;
    default:
      if (ch === "'") return `strings take double quotes in JSON, ${found}`;
      return `expected a value (object, array, string, number, true, false or null), ${found}`;
  }
}

function pathText(path: JSONPath): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out === '' ? seg : `.${seg}`;
  return out;
}

const where = (line: number, character: number): string => `line ${line + 1}, column ${character + 1}`;

class TooDeep extends Error {}

/**
 * JSON, or JSONC with `allowComments`, to a value.
 * Throws the first syntax error with line and column, or every duplicate key by JSON path.
 */
export function parseStrictJson(text: string, options: { allowComments?: boolean } = {}): unknown {
  const allowComments = options.allowComments === true;
  let syntax: TextProblem | undefined;
  const duplicates: TextProblem[] = [];
  // One map of the keys seen per open object.
  const objects: Map<string, string>[] = [];
  const containers: ('{' | '[')[] = [];
  let depth = 0;
  // Whether the top-level value is complete. Anything but whitespace after it is an error.
  let ended = false;
  const leave = (): void => {
    if (--depth === 0) ended = true;
  };
  const enter = (): void => {
    if (++depth > MAX_DEPTH) throw new TooDeep();
  };
  try {
    visit(
      text,
      {
        onObjectBegin: () => {
          enter();
          objects.push(new Map());
          containers.push('{');
        },
        onObjectEnd: () => {
          leave();
          objects.pop();
          containers.pop();
        },
        onArrayBegin: () => {
          enter();
          containers.push('[');
        },
        onArrayEnd: () => {
          leave();
          containers.pop();
        },
        onLiteralValue: () => {
          if (depth === 0) ended = true;
        },
        onObjectProperty: (key, _offset, _length, line, character, pathSupplier) => {
          const seen = objects[objects.length - 1];
          const at = where(line, character);
          const first = seen?.get(key);
          if (first === undefined) seen?.set(key, at);
          else
            duplicates.push({
              path: pathText([...pathSupplier(), key]),
              message: `duplicate key "${key}" at ${at} (first at ${first}): JSON keeps only the last, so remove one`,
            });
        },
        onError: (code, offset, _length, line, character) => {
          syntax ??= {
            path: '',
            message:
              `not valid JSON ` +
              `at ${where(line, character)}: ` +
              (ended
                ? `unexpected ${showChar(text[offset])} after the end of the document`
                : syntaxMessage(printParseErrorCode(code), text, offset, containers[containers.length - 1])),
          };
        },
      },
      { disallowComments: !allowComments, allowTrailingComma: false, allowEmptyContent: false },
    );
  } catch (e) {
    if (!(e instanceof TooDeep)) throw e;
    throw new SpecTextError([
      { path: '', message: `not valid JSON: nested deeper than ${MAX_DEPTH} levels (a spec needs fewer than 10)` },
    ]);
  }
  if (syntax) throw new SpecTextError([syntax]);
  if (duplicates.length > 0) throw new SpecTextError(duplicates);
  // The text is strict JSON now, so JSON.parse gives the value and keeps "__proto__" as a key.
  return JSON.parse(allowComments ? stripComments(text) : text) as unknown;
}
