import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

// docker-compose.yml as an operator starts it: the gateway must not face the network with a token anyone can
// read in this repository.
const compose = readFileSync(join(import.meta.dirname, '..', '..', 'docker-compose.yml'), 'utf8');
const gateway = compose.slice(compose.indexOf('\n  gateway:'), compose.indexOf('\nnetworks:'));

it('publishes the gateway on 127.0.0.1 unless GATEWAY_BIND says otherwise', () => {
  const ports = [...gateway.matchAll(/^\s+- "(.+:8080:8080)"$/gm)].map((m) => m[1]);
  expect(ports).toEqual([`\${GATEWAY_BIND:-127.0.0.1}:8080:8080`]);
});

it('has no default admin token: compose refuses to start without one', () => {
  const line = /GATEWAY_ADMIN_TOKEN: (.+)$/m.exec(gateway)?.[1];
  expect(line).toMatch(/^\$\{GATEWAY_ADMIN_TOKEN:\?.+\}$/);
});
