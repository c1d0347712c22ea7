import { describe, expect, it } from 'vitest';
import { fieldChanges, valueText } from './changes';

describe("an audit entry's changes", () => {
  it('lists every field of an update, marking those that changed', () => {
    expect(
      fieldChanges(
        { name: 'a', enabled: true, filters: [{ field: 'status' }], gone: 1 },
        { name: 'a', enabled: false, filters: [{ field: 'status' }], added: null },
      ),
    ).toEqual([
      { field: 'name', before: 'a', after: 'a', changed: false },
      { field: 'enabled', before: true, after: false, changed: true },
      { field: 'filters', before: [{ field: 'status' }], after: [{ field: 'status' }], changed: false },
      { field: 'gone', before: 1, after: undefined, changed: true },
      { field: 'added', before: undefined, after: null, changed: true },
    ]);
  });

  it('shows a creation as every field set, and a deletion as every field gone', () => {
    expect(fieldChanges(null, { id: 7, name: 'x' })).toEqual([
      { field: 'id', before: undefined, after: 7, changed: true },
      { field: 'name', before: undefined, after: 'x', changed: true },
    ]);
    expect(fieldChanges({ id: 7 }, null)).toEqual([{ field: 'id', before: 7, after: undefined, changed: true }]);
  });

  it('takes a value that is not an object as one field', () => {
    expect(fieldChanges('a', 'b')).toEqual([{ field: '', before: 'a', after: 'b', changed: true }]);
    expect(fieldChanges(null, null)).toEqual([]);
    expect(valueText('text')).toBe('text');
    expect(valueText({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
  });
});
