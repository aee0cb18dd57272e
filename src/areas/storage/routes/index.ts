import type { KmsKeyService } from '../kms-keys.js';
import type { StorageService } from '../service.js';
import { bucketRoutes } from './buckets.js';
import { catalogueRoutes } from './catalogue.js';
import { configurationRoutes } from './configuration.js';
import { keyRoutes } from './keys.js';
import { kmsKeyRoutes } from './kms-keys.js';

export function storageRoutes(
  storage: StorageService,
  kms: KmsKeyService,
  endpoint: () => string,
  signingRegions: () => readonly string[],
  baseDomain: string | null,
  limits: { maxUploadBytes: number | null; maxConnectionsPerKey: number | null },
) {
  return [
    ...bucketRoutes(storage),
    ...keyRoutes(storage),
    ...kmsKeyRoutes(kms),
    ...configurationRoutes(storage),
    ...catalogueRoutes(endpoint, signingRegions, baseDomain, limits),
  ];
}
