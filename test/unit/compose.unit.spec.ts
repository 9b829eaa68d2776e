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

it('keeps the data directory on a volume, the blobs in MinIO, and asks readiness of /readyz', () => {
  expect(gateway).toMatch(/^\s+GATEWAY_DATA_DIR: \/data$/m);
  expect(gateway).toMatch(/^\s+- gateway-data:\/data$/m);
  expect(compose).toMatch(/^ {2}gateway-data:$/m);
  expect(gateway).toMatch(/^\s+GATEWAY_BLOB_STORE: s3$/m);
  expect(gateway).toMatch(/^\s+S3_ENDPOINT: http:\/\/minio:9000$/m);
  // MinIO's secret has no default either.
  for (const line of compose.matchAll(/(?:S3_SECRET_ACCESS_KEY|MINIO_ROOT_PASSWORD): (.+)$/gm))
    expect(line[1]).toMatch(/^\$\{S3_SECRET_ACCESS_KEY:\?.+\}$/);
  expect(gateway).toContain("fetch('http://127.0.0.1:8080/readyz')");
});
