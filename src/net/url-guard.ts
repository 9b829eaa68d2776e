import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { Agent, type Dispatcher, request } from 'undici';

/**
 * URLs that clients hand the gateway (webhook_url, image_url, audio_url) are fetched or called from inside the
 * operator's network, so they are held to the public internet: http(s) only, and no loopback, private,
 * link-local, carrier-grade NAT, multicast or cloud metadata address — checked on the address the name resolves
 * to, on every redirect hop, and on the connection itself (the socket is pinned to the checked address, so a DNS
 * answer that changes between check and connect cannot slip through).
 */
export class UrlRefused extends Error {
  override readonly name = 'UrlRefused';
}

/** The host name did not resolve: refused when fetching, but not proof that the URL is bad (DNS may be down). */
export class HostUnresolved extends UrlRefused {}

/** The operator's switch for private addresses (tests, and gateways whose providers live on a private network). */
export function allowPrivateUrls(env: NodeJS.ProcessEnv): boolean {
  return env.GATEWAY_ALLOW_PRIVATE_URLS === 'true';
}

const blocked = new BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(address, prefix, 'ipv4');
}
for (const [address, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(address, prefix, 'ipv6');
}

/** Whether an IP address is one a client's URL may not reach. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family !== 6) return true;
  const words = ipv6Words(bare);
  const embedded = embeddedIpv4(words);
  if (embedded === null) return true;
  if (embedded !== undefined) return blocked.check(embedded, 'ipv4');
  return blocked.check(bare, 'ipv6');
}

/**
 * The IPv4 address inside an IPv6 one whose traffic reaches it, checked by the IPv4 rules: mapped
 * (`::ffff:a.b.c.d`), translated (`::ffff:0:a.b.c.d`), NAT64's well-known prefix (`64:ff9b::/96`) and 6to4
 * (`2002:AABB:CCDD::/48`). `null` refuses the address whole: IPv4-compatible (`::a.b.c.d`, deprecated), the
 * local-use NAT64 prefix `64:ff9b:1::/48` (its embedding is the operator's choice) and Teredo (`2001::/32`, whose
 * IPv4 is obfuscated). `undefined`: no IPv4 inside.
 */
function embeddedIpv4(w: number[]): string | null | undefined {
  const ipv4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => w.slice(from, to).every((word) => word === 0);
  const [w0 = 0, w1 = 0, w2 = 0, , w4 = 0, w5 = 0, w6 = 0, w7 = 0] = w;
  if (zeros(0, 5) && w5 === 0xffff) return ipv4(w6, w7);
  if (zeros(0, 4) && w4 === 0xffff && w5 === 0) return ipv4(w6, w7);
  if (zeros(0, 6)) return null;
  if (w0 === 0x64 && w1 === 0xff9b && zeros(2, 6)) return ipv4(w6, w7);
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 1) return null;
  if (w0 === 0x2002) return ipv4(w1, w2);
  if (w0 === 0x2001 && w1 === 0) return null;
  return undefined;
}

/** The eight 16-bit words of a valid IPv6 address (a trailing dotted IPv4 included). */
function ipv6Words(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':').map((h) => Number.parseInt(h, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** Parses and checks the form of a URL (scheme, credentials); the address is checked when it is resolved. */
export function parseRemoteUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused('not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UrlRefused(`only http and https URLs are accepted, not ${url.protocol.replace(':', '')}`);
  }
  if (url.username || url.password) throw new UrlRefused('URLs with credentials are not accepted');
  return url;
}

/** Resolves the URL's host and refuses it when any of its addresses is private (unless allowed). */
export async function resolvePublic(
  url: URL,
  allowPrivate: boolean,
  refused: (address: string) => boolean = isPrivateAddress,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  const addresses = literal
    ? [{ address: host, family: literal as 4 | 6 }]
    : await lookup(host, { all: true, verbatim: true }).catch(() => {
        throw new HostUnresolved(`the host ${host} could not be resolved`);
      });
  if (!allowPrivate) {
    const bad = addresses.find((a) => refused(a.address));
    if (bad) throw new UrlRefused(`${host} resolves to ${bad.address}, a private or reserved address`);
  }
  const first = addresses[0];
  if (!first) throw new UrlRefused(`the host ${host} has no address`);
  return { address: first.address, family: first.family as 4 | 6 };
}

/**
 * Checks a URL as a client gave it, for later use (a webhook, a job's input): its form, and the addresses its
 * host resolves to now. A host that does not resolve now is let through; the URL is checked again, resolved,
 * every time it is fetched.
 */
export async function checkRemoteUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = parseRemoteUrl(raw);
  try {
    await resolvePublic(url, allowPrivate);
  } catch (error) {
    if (!(error instanceof HostUnresolved)) throw error;
  }
  return url;
}

/** A connection pinned to an address already checked. */
function pinnedAgent(address: string, family: 4 | 6): Agent {
  return new Agent({
    connect: {
      lookup: (_host, _options, callback) => callback(null, [{ address, family }] as never, family),
    },
  });
}

export interface GuardedRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
  /** Whole-exchange limit, from connecting to the last body byte. */
  timeoutMs?: number;
  allowPrivate: boolean;
  /** Which resolved addresses are refused: the private and reserved ranges unless said (tests stand in a public hop). */
  refused?: (address: string) => boolean;
  maxRedirects?: number;
  /** False: a redirect is returned as the answer instead of followed (webhook deliveries). */
  followRedirects?: boolean;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** The URL that answered, after redirects. */
  url: string;
}

/**
 * Fetches a client's URL with the guard on every hop. Redirects are followed by hand (a 303, or a 301/302 after a
 * POST, becomes a GET without a body, as browsers do). A refused hop throws UrlRefused; a network failure throws
 * the underlying error.
 */
export async function guardedFetch(raw: string, init: GuardedRequest): Promise<GuardedResponse> {
  let url = parseRemoteUrl(raw);
  let method = init.method ?? 'GET';
  let body = init.body;
  const signal = init.timeoutMs
    ? AbortSignal.any([init.signal ?? new AbortController().signal, AbortSignal.timeout(init.timeoutMs)])
    : init.signal;
  for (let hop = 0; ; hop++) {
    const { address, family } = await resolvePublic(url, init.allowPrivate, init.refused);
    const dispatcher = pinnedAgent(address, family);
    const response = await request(url, {
      method,
      headers: init.headers,
      body,
      signal,
      dispatcher,
    }).catch(async (error) => {
      await dispatcher.close();
      throw error;
    });
    const location = response.headers.location;
    if (
      init.followRedirects !== false &&
      response.statusCode >= 300 &&
      response.statusCode < 400 &&
      typeof location === 'string'
    ) {
      await response.body.dump();
      await dispatcher.close();
      if (hop >= (init.maxRedirects ?? 5)) throw new UrlRefused('too many redirects');
      url = parseRemoteUrl(new URL(location, url).toString());
      if (
        response.statusCode === 303 ||
        ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = undefined;
      }
      continue;
    }
    // The pinned agent serves this one exchange; it closes once the body is read or dropped.
    response.body.once('close', () => void dispatcher.close());
    return {
      status: response.statusCode,
      headers: response.headers,
      body: response.body,
      url: url.toString(),
    };
  }
}
