/** One field of a change's target: its value before and after (undefined where that side has none). */
export type FieldChange = { field: string; before: unknown; after: unknown; changed: boolean };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// Both sides come back from the same jsonb column type, whose key order is its own: equal values print alike.
const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);

/**
 * A change field by field, in the target's own order: every field of an object (before, after or both),
 * each marked changed or not. A target that is not an object on both sides is one unnamed field.
 */
export function fieldChanges(before: unknown, after: unknown): FieldChange[] {
  const sides = [before ?? {}, after ?? {}];
  if (!sides.every(isRecord)) return [{ field: '', before, after, changed: !same(before, after) }];
  const [b, a] = sides as Record<string, unknown>[];
  return [...new Set([...Object.keys(b!), ...Object.keys(a!)])].map((field) => ({
    field,
    before: b![field],
    after: a![field],
    changed: !(field in b! && field in a! && same(b![field], a![field])),
  }));
}

/** A recorded value as text: strings as they are, anything else as JSON. */
export const valueText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
