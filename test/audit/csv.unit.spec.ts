import { describe, expect, it } from 'vitest';
import { csvField, csvNumber, toCsv } from '../../src/audit/csv.ts';

describe('the CSV writer', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1+1', "'-1+1"],
    ['-5', "'-5"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1+1', `"'\t=1+1"`],
    ['\r=1+1', `"'\r=1+1"`],
  ])('hands text starting like a formula over as text: %j', (text, field) => {
    expect(csvField(text)).toBe(field);
  });

  it('quotes what could split a cell: quotes, commas, semicolons, tabs and line breaks', () => {
    expect(csvField('a "b"')).toBe('"a ""b"""');
    expect(csvField('a,b')).toBe('"a,b"');
    // A semicolon separates cells in many locales' spreadsheets: quoted, `x;=1+1` stays one cell.
    expect(csvField('x;=1+1')).toBe('"x;=1+1"');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('plain text 1.5')).toBe('plain text 1.5');
    expect(csvField('')).toBe('');
  });

  it('writes numbers of numeric columns as numbers, negative ones included', () => {
    expect(csvField(csvNumber(-500n))).toBe('-500');
    expect(csvField(csvNumber('-0.000001234'))).toBe('-0.000001234');
    expect(csvField(csvNumber(42))).toBe('42');
    for (const notANumber of ['-1+1', '=1', '', '1e5', ' 1', Number.NaN])
      expect(() => csvNumber(notANumber)).toThrow(TypeError);
  });

  it('ends every row with CRLF', () => {
    expect(
      toCsv([
        ['a', csvNumber(1)],
        ['=b', csvNumber(-2)],
      ]),
    ).toBe("a,1\r\n'=b,-2\r\n");
  });
});
