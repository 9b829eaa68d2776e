import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch, isPrivateAddress, UrlRefused } from '../../src/net/url-guard.ts';

// Two local servers stand in for the internet: 127.0.0.1 plays a public host (the test's `refused` lets it
// through) and 127.0.0.2 a private one (refused, as the real rule refuses every loopback address).
const refused = (address: string) => address === '127.0.0.2';
let publicHost: Server;
let privateHost: Server;
let publicUrl: string;
let privateUrl: string;
const privateHits: string[] = [];

beforeAll(async () => {
  privateHost = createServer((req, res) => {
    privateHits.push(req.url ?? '');
    res.end('secret');
  });
  await new Promise<void>((resolve) => privateHost.listen(0, '127.0.0.2', resolve));
  privateUrl = `http://127.0.0.2:${(privateHost.address() as AddressInfo).port}`;
  publicHost = createServer((req, res) => {
    if (req.url === '/to-private')
      return void res.writeHead(302, { location: `${privateUrl}/metadata` }).end();
    if (req.url === '/to-public') return void res.writeHead(301, { location: '/final' }).end();
    if (req.url === '/to-file') return void res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    if (req.url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    res.end(`public ${req.url}`);
  });
  await new Promise<void>((resolve) => publicHost.listen(0, '127.0.0.1', resolve));
  publicUrl = `http://127.0.0.1:${(publicHost.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => publicHost?.close(resolve));
  await new Promise((resolve) => privateHost?.close(resolve));
});

describe('guardedFetch', () => {
  it('follows a redirect to another public address', async () => {
    const response = await guardedFetch(`${publicUrl}/to-public`, { allowPrivate: false, refused });
    expect(response.status).toBe(200);
    expect(await response.body.text()).toBe('public /final');
    expect(response.url).toBe(`${publicUrl}/final`);
  });

  it('refuses a redirect to a private address without connecting to it', async () => {
    await expect(guardedFetch(`${publicUrl}/to-private`, { allowPrivate: false, refused })).rejects.toThrow(
      new UrlRefused('127.0.0.2 resolves to 127.0.0.2, a private or reserved address'),
    );
    expect(privateHits).toEqual([]);
  });

  it('refuses a redirect to another scheme, and a redirect loop', async () => {
    await expect(guardedFetch(`${publicUrl}/to-file`, { allowPrivate: false, refused })).rejects.toThrow(
      /only http and https/,
    );
    await expect(guardedFetch(`${publicUrl}/loop`, { allowPrivate: false, refused })).rejects.toThrow(
      /too many redirects/,
    );
  });

  it('with the real rule refuses loopback, private, link-local, metadata and mapped addresses', async () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
    await expect(guardedFetch(`${publicUrl}/x`, { allowPrivate: false })).rejects.toThrow(UrlRefused);
    expect((await guardedFetch(`${publicUrl}/x`, { allowPrivate: true })).status).toBe(200);
  });

  it('checks the IPv4 address an IPv6 one carries, or refuses the forms that hide it', async () => {
    const refusedForms = {
      'IPv4-compatible': ['::127.0.0.1', '::7f00:1', '::a00:1', '::8.8.8.8'],
      'IPv4-mapped, hex': ['::ffff:7f00:1', '::ffff:a9fe:a9fe'],
      'IPv4-translated': ['::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '::ffff:0:a00:1'],
      'NAT64 to a private IPv4': ['64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::10.0.0.1'],
      'NAT64 local use': ['64:ff9b:1::8.8.8.8', '64:ff9b:1:2::a00:1'],
      '6to4 of a private IPv4': ['2002:7f00:1::', '2002:a9fe:a9fe::1', '2002:c0a8:101::5'],
      Teredo: ['2001:0:4136:e378:8000:63bf:3fff:fdd2'],
      'site-local': ['fec0::1'],
      'with a zone': ['fe80::1%eth0'],
    };
    for (const [form, addresses] of Object.entries(refusedForms)) {
      for (const address of addresses) expect(isPrivateAddress(address), `${form} ${address}`).toBe(true);
    }
    for (const address of ['::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1', '2001:4860:4860::8888']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
    const port = new URL(privateUrl).port;
    for (const host of ['[::127.0.0.2]', '[::ffff:0:7f00:2]', '[64:ff9b::7f00:2]', '[2002:7f00:2::]']) {
      await expect(guardedFetch(`http://${host}:${port}/x`, { allowPrivate: false }), host).rejects.toThrow(
        /a private or reserved address/,
      );
    }
    expect(privateHits).toEqual([]);
  });
});
