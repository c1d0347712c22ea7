import { describe, expect, it } from 'vitest';
import { escapeFormula } from './text';

describe('escapeFormula', () => {
  it('puts a quote before a cell that starts like a formula, and leaves any other as it is', () => {
    for (const formula of ['=HYPERLINK("x")', '+cmd|x', '-2+3', '@SUM(A1)', '\t=1', '\r=1'])
      expect(escapeFormula(formula)).toBe(`'${formula}`);
    for (const text of ['', 'a=b', ' =1', '[1]', '"=x"', '1-2']) expect(escapeFormula(text)).toBe(text);
  });
});
