import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { ByteWriter, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { ParquetFooter } from './parquet-footer';

const ROWS_PER_GROUP = 7;

const columnData = (group: number) => {
  const rows = Array.from({ length: ROWS_PER_GROUP }, (_, r) => group * ROWS_PER_GROUP + r);
  return [
    { name: 'id', type: 'STRING' as const, data: rows.map((r) => `span-${r}`), statistics: false, offsetIndex: false },
    { name: 'at', type: 'TIMESTAMP' as const, data: rows.map((r) => new Date(1e12 + r * 1000)), offsetIndex: false },
    { name: 'cost', type: 'DOUBLE' as const, data: rows.map((r) => (r % 3 ? r / 8 : null)), offsetIndex: false },
  ];
};

/** A file of `groups` row groups, closed by the writer itself or by a ParquetFooter given each group as written. */
function file(groups: number, close: 'writer' | 'footer'): Buffer {
  const out = new ByteWriter();
  const writer = new ParquetWriter({ writer: out, schema: schemaFromColumnData({ columnData: columnData(0) }) });
  const footer = new ParquetFooter(writer.schema, writer.createdBy);
  for (let g = 0; g < groups; g++) {
    void writer.write({ columnData: columnData(g), rowGroupSize: ROWS_PER_GROUP });
    if (close === 'footer') for (const group of writer.row_groups.splice(0)) footer.add(group);
  }
  if (close === 'writer') {
    void writer.finish();
    return Buffer.from(out.getBytes());
  }
  return Buffer.concat([Buffer.from(out.getBytes()), footer.bytes()]);
}

describe('ParquetFooter', () => {
  // 14 and 15 row groups: the last list whose size fits in its header's byte, and the first that does not.
  it.each([0, 1, 14, 15, 40])('closes a file of %i row groups byte for byte as the writer would', async (groups) => {
    const closed = file(groups, 'footer');
    expect(closed.equals(file(groups, 'writer'))).toBe(true);
    const bytes = new Uint8Array(closed).buffer;
    expect(parquetMetadata(bytes).row_groups).toHaveLength(groups);
    const rows = (await parquetReadObjects({ file: bytes })) as { id: string }[];
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: groups * ROWS_PER_GROUP }, (_, r) => `span-${r}`));
  });
});
