// TensorBoard `events.out.tfevents.*`: TFRecord framing around serialized tensorflow.Event protos.
//   uint64 length (LE) | uint32 masked_crc32c(length) | data[length] | uint32 masked_crc32c(data)
// Scalars are Summary.Value.simple_value (a float32: exact bits) or a scalar TensorProto
// (`add_scalar(new_style=True)`, TF2 tf.summary) holding float_val, double_val or tensor_content.
// The file is appended while training runs, so a cut-off last record is expected and only noted.
import { crc32c } from '@aws-crypto/crc32c';
import * as protobuf from 'protobufjs';
import { ParsedLog, SeriesBuilder, emptyLog } from '../series.js';

// Only the fields a scalar needs, with tensorflow's field numbers (event.proto, summary.proto,
// tensor.proto); protobuf skips every other field of the real messages.
const PROTO = `
syntax = "proto3";
message Event {
  double wall_time = 1;
  int64 step = 2;
  oneof what { string file_version = 3; Summary summary = 5; }
}
message Summary {
  message Value {
    string tag = 1;
    oneof value { float simple_value = 2; TensorProto tensor = 8; }
  }
  repeated Value value = 1;
}
message TensorProto {
  int32 dtype = 1;
  bytes tensor_content = 4;
  repeated float float_val = 5 [packed = true];
  repeated double double_val = 6 [packed = true];
  repeated int32 int_val = 7 [packed = true];
  repeated int64 int64_val = 10 [packed = true];
}
`;

let eventType: protobuf.Type | undefined;
function eventMessage(): protobuf.Type {
  eventType ??= protobuf.parse(PROTO, { keepCase: true }).root.lookupType('Event');
  return eventType;
}

const DT_FLOAT = 1;
const DT_DOUBLE = 2;
const DT_INT32 = 3;
const DT_INT64 = 9;

export function maskedCrc32c(data: Uint8Array): number {
  const crc = crc32c(data) >>> 0;
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** True when the bytes start with a TFRecord whose length checksum is right. */
export function isTfevents(bytes: Buffer): boolean {
  return bytes.length >= 12 && bytes.readUInt32LE(8) === maskedCrc32c(bytes.subarray(0, 8));
}

interface Scalar {
  value: number;
  dtype: 'float32' | 'float64' | 'int';
}

export function readTfevents(bytes: Buffer): ParsedLog {
  const builder = new SeriesBuilder('tfevents');
  const dtypes = new Map<string, Set<Scalar['dtype']>>();
  let offset = 0;
  let records = 0;
  while (offset < bytes.length) {
    if (bytes.length - offset < 12) {
      builder.note(`the last record is cut off at byte ${offset} (the file is still being written?)`);
      break;
    }
    const header = bytes.subarray(offset, offset + 8);
    if (bytes.readUInt32LE(offset + 8) !== maskedCrc32c(header)) {
      builder.note(`bad length checksum at byte ${offset}; the rest of the file was not read`);
      break;
    }
    const length = Number(bytes.readBigUInt64LE(offset));
    const start = offset + 12;
    if (bytes.length - start < length + 4) {
      builder.note(`the last record is cut off at byte ${offset} (the file is still being written?)`);
      break;
    }
    const data = bytes.subarray(start, start + length);
    if (bytes.readUInt32LE(start + length) !== maskedCrc32c(data)) {
      builder.note(`bad data checksum in the record at byte ${offset}; the rest of the file was not read`);
      break;
    }
    offset = start + length + 4;
    records++;
    let event: Record<string, unknown>;
    try {
      event = eventMessage().toObject(eventMessage().decode(data), { longs: Number }) as Record<string, unknown>;
    } catch (error) {
      builder.noteKind('proto', (n) => `${n} record(s) are not Event protos (first at byte ${start - 12}: ${(error as Error).message})`);
      continue;
    }
    const summary = event['summary'] as { value?: { tag?: string; simple_value?: number; tensor?: TensorObject }[] } | undefined;
    if (!summary?.value) continue; // file_version, graphs, session logs
    const step = Number(event['step'] ?? 0);
    for (const v of summary.value) {
      const scalar = scalarOf(v);
      if (!scalar || !v.tag) continue;
      if (!dtypes.has(v.tag)) dtypes.set(v.tag, new Set());
      dtypes.get(v.tag)!.add(scalar.dtype);
      builder.add(v.tag, step, scalar.value, String(scalar.value));
    }
  }
  if (records === 0) return emptyLog('tfevents', 'no complete TFRecord in the file', builder.notes());
  if (builder.isEmpty) return emptyLog('tfevents', 'the event file holds no scalar summaries', builder.notes());
  return builder.build((name) => {
    const kinds = dtypes.get(name) ?? new Set();
    return { exact: true, what: kinds.has('float64') ? 'tfevents float64' : kinds.has('float32') ? 'tfevents float32' : 'tfevents integers' };
  });
}

interface TensorObject {
  dtype?: number;
  tensor_content?: Uint8Array;
  float_val?: number[];
  double_val?: number[];
  int_val?: number[];
  int64_val?: number[];
}

function scalarOf(v: { simple_value?: number; tensor?: TensorObject }): Scalar | undefined {
  if (typeof v.simple_value === 'number') return { value: v.simple_value, dtype: 'float32' };
  const t = v.tensor;
  if (!t) return undefined;
  if (t.float_val?.length === 1) return { value: t.float_val[0]!, dtype: 'float32' };
  if (t.double_val?.length === 1) return { value: t.double_val[0]!, dtype: 'float64' };
  if (t.int_val?.length === 1) return { value: t.int_val[0]!, dtype: 'int' };
  if (t.int64_val?.length === 1) return { value: Number(t.int64_val[0]), dtype: 'int' };
  const content = t.tensor_content;
  if (!content) return undefined;
  const view = new DataView(content.buffer, content.byteOffset, content.byteLength);
  if (t.dtype === DT_FLOAT && content.byteLength === 4) return { value: view.getFloat32(0, true), dtype: 'float32' };
  if (t.dtype === DT_DOUBLE && content.byteLength === 8) return { value: view.getFloat64(0, true), dtype: 'float64' };
  if (t.dtype === DT_INT32 && content.byteLength === 4) return { value: view.getInt32(0, true), dtype: 'int' };
  if (t.dtype === DT_INT64 && content.byteLength === 8) return { value: Number(view.getBigInt64(0, true)), dtype: 'int' };
  return undefined;
}
