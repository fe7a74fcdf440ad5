/**
 * Reading entries of a ZIP file (APPNOTE 6.3) from memory, as .xlsx workbooks are. The
 * sizes an archive declares can lie, so inflation is bounded by the bytes it actually
 * produces: a small upload cannot unpack into gigabytes (a "zip bomb").
 */
import { createInflateRaw, inflateRaw } from 'node:zlib';

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  localHeaderOffset: number;
}

/** Bytes still allowed to be unpacked, shared by every entry of one archive. */
export interface InflateBudget {
  remaining: number;
}

export class ZipError extends Error {
  constructor(
    message: string,
    /** true when the budget ran out (the archive unpacks to too much). */
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const ZIP64_EXTRA = 0x0001;
const MAX_COMMENT = 0xffff;
const STORED = 0;
const DEFLATED = 8;

/** The archive's entries by lower-case name (OPC part names are case-insensitive); null when `bytes` is not a ZIP. */
export function zipEntries(bytes: Uint8Array): Map<string, ZipEntry> | null {
  if (bytes.length < 22) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end record sits before a comment of up to 64 KiB; its signature may also occur inside that comment.
  for (let end = bytes.length - 22; end >= Math.max(0, bytes.length - 22 - MAX_COMMENT); end--) {
    if (view.getUint32(end, true) !== END_OF_DIRECTORY) continue;
    const entries = directory(bytes, view, view.getUint16(end + 10, true), view.getUint32(end + 16, true));
    if (entries !== null) return entries;
  }
  return null;
}

function directory(bytes: Uint8Array, view: DataView, count: number, offset: number): Map<string, ZipEntry> | null {
  const entries = new Map<string, ZipEntry>();
  const decoder = new TextDecoder();
  for (let i = 0; i < count; i++) {
    if (offset + 46 > view.byteLength || view.getUint32(offset, true) !== DIRECTORY_ENTRY) return null;
    const nameLength = view.getUint16(offset + 28, true);
    const extraLength = view.getUint16(offset + 30, true);
    const commentLength = view.getUint16(offset + 32, true);
    const nameStart = offset + 46;
    if (nameStart + nameLength + extraLength > view.byteLength) return null;
    const name = decoder.decode(bytes.subarray(nameStart, nameStart + nameLength));
    let compressedSize = view.getUint32(offset + 20, true);
    let localHeaderOffset = view.getUint32(offset + 42, true);
    if (compressedSize === 0xffffffff || localHeaderOffset === 0xffffffff) {
      // ZIP64: the real values are in an extra field, in a fixed order, for the fields that overflowed.
      const zip64 = zip64Fields(view, nameStart + nameLength, extraLength);
      let k = view.getUint32(offset + 24, true) === 0xffffffff ? 1 : 0;
      if (compressedSize === 0xffffffff) compressedSize = zip64[k++] ?? Infinity;
      if (localHeaderOffset === 0xffffffff) localHeaderOffset = zip64[k] ?? Infinity;
    }
    entries.set(name.replace(/^\//, '').toLowerCase(), {
      name,
      method: view.getUint16(offset + 10, true),
      compressedSize,
      localHeaderOffset,
    });
    offset = nameStart + nameLength + extraLength + commentLength;
  }
  return entries;
}

function zip64Fields(view: DataView, start: number, length: number): number[] {
  for (let at = start; at + 4 <= start + length; ) {
    const id = view.getUint16(at, true);
    const size = view.getUint16(at + 2, true);
    if (id === ZIP64_EXTRA) {
      const fields: number[] = [];
      for (let f = at + 4; f + 8 <= at + 4 + size && f + 8 <= view.byteLength; f += 8) fields.push(Number(view.getBigUint64(f, true)));
      return fields;
    }
    at += 4 + size;
  }
  return [];
}

/** One entry's content, unpacked; throws ZipError (tooLarge when the budget runs out). */
export async function readEntry(bytes: Uint8Array, entry: ZipEntry, budget: InflateBudget): Promise<Buffer> {
  const data = entryData(bytes, entry);
  if (entry.method === STORED) return take(Buffer.from(data), budget);
  if (budget.remaining <= 0) throw new ZipError('The archive unpacks to more than the limit', true);
  const out = await new Promise<Buffer>((resolve, reject) => {
    inflateRaw(data, { maxOutputLength: budget.remaining }, (error, result) => {
      if (!error) resolve(result);
      else if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
        reject(new ZipError('The archive unpacks to more than the limit', true));
      else reject(new ZipError(`The entry ${entry.name} is damaged: ${error.message}`));
    });
  });
  return take(out, budget);
}

/** Pieces of an entry unpacked by a large read: about this many bytes each. */
const PIECE = 256 * 1024;

/**
 * One entry's content in pieces of about PIECE bytes, as the inflater makes them: a large
 * part (a sheet of megabytes) is never one buffer, nor copied into one in a single turn
 * (docs/limits.md#large-work). Bounded by the budget as readEntry is.
 */
export async function readEntryPieces(bytes: Uint8Array, entry: ZipEntry, budget: InflateBudget): Promise<Buffer[]> {
  const data = entryData(bytes, entry);
  if (entry.method === STORED) {
    take(Buffer.from(data.buffer, data.byteOffset, data.byteLength), budget);
    const pieces: Buffer[] = [];
    for (let at = 0; at < data.length; at += PIECE) pieces.push(Buffer.from(data.subarray(at, at + PIECE)));
    return pieces;
  }
  if (budget.remaining <= 0) throw new ZipError('The archive unpacks to more than the limit', true);
  return new Promise<Buffer[]>((resolve, reject) => {
    const pieces: Buffer[] = [];
    const inflater = createInflateRaw({ chunkSize: PIECE });
    inflater.on('data', (piece: Buffer) => {
      if (piece.length > budget.remaining) {
        budget.remaining = 0;
        inflater.destroy();
        reject(new ZipError('The archive unpacks to more than the limit', true));
        return;
      }
      budget.remaining -= piece.length;
      pieces.push(piece);
    });
    inflater.on('error', (error) => reject(new ZipError(`The entry ${entry.name} is damaged: ${error.message}`)));
    inflater.on('end', () => resolve(pieces));
    inflater.end(data);
  });
}

/** The entry's stored (maybe compressed) bytes. */
function entryData(bytes: Uint8Array, entry: ZipEntry): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localHeaderOffset;
  if (!(at + 30 <= bytes.length) || view.getUint32(at, true) !== LOCAL_HEADER)
    throw new ZipError(`The entry ${entry.name} has no local header`);
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  const end = start + entry.compressedSize;
  if (!(end <= bytes.length)) throw new ZipError(`The entry ${entry.name} runs past the end of the file`);
  if (entry.method !== STORED && entry.method !== DEFLATED)
    throw new ZipError(`The entry ${entry.name} uses compression method ${entry.method}, which is not supported`);
  return bytes.subarray(start, end);
}

function take(content: Buffer, budget: InflateBudget): Buffer {
  if (content.length > budget.remaining) throw new ZipError('The archive unpacks to more than the limit', true);
  budget.remaining -= content.length;
  return content;
}
