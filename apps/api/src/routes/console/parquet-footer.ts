import { ByteWriter, type ParquetWriter } from 'hyparquet-writer';
import { writeMetadata } from 'hyparquet-writer/src/metadata.js';

// The writer's own types (it brings its own version of hyparquet's).
type RowGroup = ParquetWriter['row_groups'][number];
type SchemaElement = ParquetWriter['schema'][number];

// Thrift's compact protocol: a list's header holds its size and its elements' type, the size in the header's high
// four bits when it is under 15 and in a varint after it otherwise.
const STRUCT = 12;
const LONG_LIST = 0xf0;

/**
 * A Parquet file's footer whose row groups are encoded as they are written. hyparquet-writer's ParquetWriter keeps
 * every row group's metadata as objects until finish() (about 0.8 KB a column chunk), then builds the whole
 * footer's Thrift objects at once: together about 120 MB at the peak of a million-span export, where the encoded
 * entries are about 4 MB.
 *
 * The bytes are writeMetadata's own. Its footer with no row group is `head, row_groups, [], tail`; with one, `head,
 * row_groups, [entry], tail`: a group's entry is what the second holds in place of the first's empty list. The whole
 * footer is then `head, row_groups, [entries...], tail`, with the file's row count in the head.
 */
export class ParquetFooter {
  private readonly entries: Buffer[] = [];
  private rows = 0n;
  // The footer of no row group and no row, to set beside one of a single group.
  private readonly empty: Uint8Array;
  // The length of the footer's bytes after its list of row groups, the same whatever the groups.
  private tailLength = -1;

  constructor(
    private readonly schema: SchemaElement[],
    private readonly createdBy: string,
  ) {
    this.empty = this.encode([], 0n);
  }

  /** Encodes a row group ParquetWriter wrote (with no page index, which it would write at finish()). */
  add(group: RowGroup) {
    const { empty } = this;
    const one = this.encode([group], 0n);
    // The list's header is the first byte the two differ in: size 0, then size 1 of structs.
    let at = 0;
    while (empty[at] === one[at]) at++;
    if (empty[at] !== 0 || one[at] !== (1 << 4) + STRUCT) throw new Error('unexpected Parquet footer layout');
    this.tailLength = empty.length - at - 1;
    this.entries.push(Buffer.from(one.subarray(at + 1, one.length - this.tailLength)));
    this.rows += group.num_rows;
  }

  /** The footer: its metadata, the metadata's length, and the file's closing magic. */
  bytes(): Buffer {
    const empty = this.encode([], this.rows);
    const count = this.entries.length;
    if (!count) return this.closed([empty]);
    const at = empty.length - this.tailLength - 1;
    const header = new ByteWriter(8);
    if (count < 15) header.appendUint8((count << 4) + STRUCT);
    else {
      header.appendUint8(LONG_LIST + STRUCT);
      header.appendVarInt(count);
    }
    return this.closed([empty.subarray(0, at), header.getBytes(), ...this.entries, empty.subarray(at + 1)]);
  }

  private closed(metadata: Uint8Array[]): Buffer {
    const length = metadata.reduce((sum, part) => sum + part.length, 0);
    const end = Buffer.alloc(8);
    end.writeUInt32LE(length, 0);
    end.write('PAR1', 4, 'latin1');
    return Buffer.concat([...metadata, end]);
  }

  /** writeMetadata's footer, without the length it writes after it. */
  private encode(rowGroups: RowGroup[], numRows: bigint): Uint8Array {
    const writer = new ByteWriter();
    writeMetadata(writer, {
      version: 2,
      created_by: this.createdBy,
      schema: this.schema,
      num_rows: numRows,
      row_groups: rowGroups,
      metadata_length: 0,
    });
    return writer.getBytes().subarray(0, -4);
  }
}
