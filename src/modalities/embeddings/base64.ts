/** A vector as OpenAI sends it for `encoding_format: base64`: its float32 values, little-endian, in base64. */
export function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (const [i, value] of vector.entries()) bytes.writeFloatLE(value, i * 4);
  return bytes.toString('base64');
}

export function fromFloat32Base64(encoded: string): number[] {
  const bytes = Buffer.from(encoded, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}
