/**
 * core/format.ts escapeControls: the bidirectional formatting characters (Unicode Standard Annex #9)
 * are escaped as the C0 and C1 controls are, in running text and in a table's fields, so a
 * description cannot reorder what the terminal shows.
 */
import { escapeControls, textTable } from '../../core/format';

const BIDI = [
  '\u061c',
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
];
const RAW_BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('bidirectional characters on a terminal', () => {
  it.each(BIDI)('escapes U+%s in text and in fields', (c) => {
    // Arrange
    const text = `budget ok${c}kcolb`;

    // Act
    const shown = [escapeControls(text), escapeControls(text, { field: true })];

    // Assert
    const code = c.charCodeAt(0).toString(16).padStart(4, '0');
    expect(shown).toEqual([`budget ok\\u${code}kcolb`, `budget ok\\u${code}kcolb`]);
  });

  it('escapes them in a table cell, and leaves other text outside ASCII as it is', () => {
    // Act
    const table = textTable(['variant'], [['r\u202e6g'], ['Zürich ≤ 5']]);

    // Assert
    expect(table).not.toMatch(RAW_BIDI);
    expect(table).toContain('r\\u202e6g');
    expect(table).toContain('Zürich ≤ 5');
  });
});
