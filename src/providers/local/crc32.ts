/**
 * CRC-32 (IEEE 802.3, as PNG and zip use it). node:zlib has `crc32` only from Node 20.15, and the gateway runs on
 * 20.11, so the table-driven form is written out here.
 */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC of the parts, as if they were one buffer. */
export function crc32(...parts: Uint8Array[]): number {
  let crc = 0xffffffff;
  for (const part of parts) {
    for (let i = 0; i < part.length; i++) {
      crc = (TABLE[(crc ^ (part[i] as number)) & 0xff] as number) ^ (crc >>> 8);
    }
  }
  return (crc ^ 0xffffffff) >>> 0;
}
