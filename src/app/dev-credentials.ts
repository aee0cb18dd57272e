import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kernel } from '../kernel/kernel.js';
import { writePrivateFile } from './files.js';

export interface DevCredentials {
  customer_id: string;
  short_id: string;
  email: string;
  pat: string;
  operator_token: string | null;
  api_url: string;
}

export const devCredentialsPath = (dataDir: string) => join(dataDir, 'dev-credentials.json');
const DEV_EMAIL = 'developer@fjord.local';

/**
 * On embedded defaults Fjord creates one development customer with a PAT holding every scope
 * and writes it to `<data dir>/dev-credentials.json` (mode 0600). The file is the source of
 * truth: after a reset or with a fresh store, the same customer and PAT are restored from it,
 * so scripts written against it keep working.
 */
export async function ensureDevCredentials(kernel: Kernel): Promise<string> {
  const path = devCredentialsPath(kernel.config.dataDir);
  const saved = readSaved(path);
  if (saved) {
    if (!(await kernel.identity.getCustomer(saved.customer_id))) {
      await kernel.identity.createCustomer({
        id: saved.customer_id,
        shortId: saved.short_id,
        email: saved.email,
        firstName: 'Developer',
        customerType: 'business',
      });
      await kernel.identity.createFullPat(saved.customer_id, 'development credentials', saved.pat);
    }
    writeFile(path, { ...saved, operator_token: kernel.operatorToken(), api_url: kernel.baseUrl() });
    return path;
  }
  const existing = await kernel.identity.findCustomerByEmail(DEV_EMAIL);
  const customer =
    existing ??
    (await kernel.identity.createCustomer({
      email: DEV_EMAIL,
      firstName: 'Developer',
      customerType: 'business',
    }));
  const { key } = await kernel.identity.createFullPat(customer.id, 'development credentials');
  writeFile(path, {
    customer_id: customer.id,
    short_id: customer.short_id,
    email: customer.email,
    pat: key,
    operator_token: kernel.operatorToken(),
    api_url: kernel.baseUrl(),
  });
  return path;
}

function readSaved(path: string): DevCredentials | null {
  if (!existsSync(path)) return null;
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as DevCredentials;
    return parsed.customer_id && parsed.pat && parsed.email ? parsed : null;
  } catch {
    return null;
  }
}

const writeFile = (path: string, c: DevCredentials) =>
  writePrivateFile(path, `${JSON.stringify(c, null, 2)}\n`);
