import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM under a key the operator supplies (`GATEWAY_SECRETS_KEY`, base64 of 32 bytes). A sealed secret reads
 * `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts), the key id being the first bytes of the key's SHA-256,
 * so that after a rotation each secret names the key that opens it: the previous key
 * (`GATEWAY_SECRETS_KEY_PREVIOUS`) still opens what it sealed until `reencrypt` seals it again under the current one.
 */
export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  readonly currentKeyId: string;

  constructor(current: Buffer, previous: Buffer[] = []) {
    this.currentKeyId = keyIdOf(current);
    this.keys = new Map([current, ...previous].map((key) => [keyIdOf(key), key]));
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId) as Buffer, iv);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), sealed].map((part) => part.toString('base64url'));
    return ['v1', this.currentKeyId, ...parts].join('.');
  }

  /** Throws when no key of this box sealed it, or it was altered. */
  open(sealed: string): string {
    const [version, keyId, iv, tag, data] = sealed.split('.');
    const key = keyId === undefined ? undefined : this.keys.get(keyId);
    if (version !== 'v1' || !key || iv === undefined || tag === undefined || data === undefined)
      throw new Error(`sealed under key ${keyId ?? '?'}, which neither secrets key is`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }

  /** The id of the key a sealed secret names (to find what a rotation has left to re-encrypt). */
  static keyIdOf(sealed: string): string | undefined {
    return sealed.split('.')[1];
  }
}

function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

/** The box from the environment's settings; undefined when no current key is set. Throws on a malformed key. */
export function secretBoxOf(
  current: string | undefined,
  previous: string | undefined,
): SecretBox | undefined {
  if (!current) return undefined;
  const decode = (value: string, setting: string) => {
    const key = Buffer.from(value, 'base64');
    if (key.length !== 32)
      throw new Error(`${setting} must be the base64 of 32 bytes (it decodes to ${key.length})`);
    return key;
  };
  const previousKeys = (previous ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => decode(part, 'GATEWAY_SECRETS_KEY_PREVIOUS'));
  return new SecretBox(decode(current, 'GATEWAY_SECRETS_KEY'), previousKeys);
}
