/**
 * The unpacked size a ZIP file declares, read from its central directory without
 * unpacking anything: a small upload must not unpack into gigabytes (a "zip bomb").
 * Declared sizes can lie; this stops the ordinary bombs that zip tools make honestly.
 */

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const MAX_COMMENT = 0xffff;

/** Sum of the entries' uncompressed sizes (Infinity for ZIP64 sizes); null when `bytes` is not a ZIP. */
export function declaredUnzippedSize(bytes: Uint8Array): number | null {
  if (bytes.length < 22) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end record sits before a comment of up to 64 KiB; its signature may also occur inside that comment.
  for (let end = bytes.length - 22; end >= Math.max(0, bytes.length - 22 - MAX_COMMENT); end--) {
    if (view.getUint32(end, true) !== END_OF_DIRECTORY) continue;
    const total = directorySize(view, view.getUint16(end + 10, true), view.getUint32(end + 16, true));
    if (total !== null) return total;
  }
  return null;
}

function directorySize(view: DataView, entries: number, offset: number): number | null {
  let total = 0;
  for (let i = 0; i < entries; i++) {
    if (offset + 46 > view.byteLength || view.getUint32(offset, true) !== DIRECTORY_ENTRY) return null;
    const size = view.getUint32(offset + 24, true);
    if (size === 0xffffffff) return Infinity;
    total += size;
    offset += 46 + view.getUint16(offset + 28, true) + view.getUint16(offset + 30, true) + view.getUint16(offset + 32, true);
  }
  return total;
}
