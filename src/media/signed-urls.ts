import { createHmac, timingSafeEqual } from 'node:crypto';

export const DEFAULT_EXPIRES_IN = 3600;
export const MAX_EXPIRES_IN = 604_800;

export interface SignedUrl {
  url: string;
  expires_at: number;
}

export type Verdict = 'valid' | 'expired' | 'invalid';

/**
 * Time-limited URLs for stored bytes (job results, generated images): `<media base>/<key>?expires=<unix s>&
 * signature=<hex HMAC-SHA256 of "<key>\n<expires>">`. Anyone holding the URL may fetch the bytes until it
 * expires; changing the key or the expiry breaks the signature. The secret is derived from the operator's admin
 * token, so every instance sharing that token accepts the others' URLs and rotating it revokes them all.
 */
export class MediaUrls {
  private readonly secret: Buffer;
  constructor(
    adminToken: string,
    private readonly base: () => string,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.secret = createHmac('sha256', adminToken).update('gateway media urls v1').digest();
  }

  sign(key: string, expiresIn: number = DEFAULT_EXPIRES_IN): SignedUrl {
    const expires = Math.floor(this.clock().getTime() / 1000) + expiresIn;
    const path = key.split('/').map(encodeURIComponent).join('/');
    return {
      url: `${this.base().replace(/\/+$/, '')}/${path}?expires=${expires}&signature=${this.mac(key, expires)}`,
      expires_at: expires,
    };
  }

  verify(key: string, expires: string | undefined, signature: string | undefined): Verdict {
    if (!expires || !/^\d{1,12}$/.test(expires) || !signature || !/^[0-9a-f]{64}$/.test(signature))
      return 'invalid';
    const expected = Buffer.from(this.mac(key, Number(expires)), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
    return Number(expires) * 1000 <= this.clock().getTime() ? 'expired' : 'valid';
  }

  private mac(key: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest('hex');
  }
}

const TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg',
  ogg: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  webm: 'video/webm',
  glb: 'model/gltf-binary',
  gltf: 'model/gltf+json',
  obj: 'model/obj',
  fbx: 'application/octet-stream',
  usdz: 'model/vnd.usdz+zip',
  json: 'application/json',
  jsonl: 'application/jsonl',
  txt: 'text/plain; charset=utf-8',
  pdf: 'application/pdf',
};

/** The content type a stored file is served with, from its name's extension. */
export function contentTypeOf(filename: string): string {
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
  return (extension && TYPES[extension]) || 'application/octet-stream';
}
