#!/usr/bin/env node
// `npx model-gateway <command>`: the operator CLI (src/cli/main.ts), whose TypeScript runs through tsx as the
// gateway's does.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
