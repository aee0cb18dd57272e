#!/usr/bin/env node
// Runs Fjord's TypeScript sources directly: `npm ci` is the only step before `npx fjord`.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
