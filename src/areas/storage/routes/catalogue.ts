import { Type } from '@sinclair/typebox';
import { publicAccess } from '../../../kernel/auth/principal.js';
import { defineRoute } from '../../../kernel/http/route.js';
import { S3_ACTIONS, STORAGE_TIERS } from '../catalogue.js';
import { s3Guide } from '../guide.js';
import { Action, S3Guide, StorageTier } from '../schemas.js';
import { storageRead, TAG } from './access.js';

export function catalogueRoutes(
  endpoint: () => string,
  acceptedRegions: () => readonly string[],
  baseDomain: string | null,
  limits: { maxUploadBytes: number | null; maxConnectionsPerKey: number | null },
) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/storage/actions',
      operationId: 'listStorageActions',
      tag: TAG,
      summary: 'List the S3 actions keys can be granted',
      description: '`bucket` actions are granted per bucket; `account` actions only on account-level keys.',
      access: storageRead,
      response: { 200: Type.Array(Action) },
      handler: async () => S3_ACTIONS,
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/tiers',
      operationId: 'listStorageTiers',
      tag: TAG,
      summary: 'List the storage tiers',
      access: storageRead,
      response: { 200: Type.Array(StorageTier) },
      handler: async () => STORAGE_TIERS,
    }),
    defineRoute({
      method: 'GET',
      url: '/storage/s3',
      operationId: 'getS3UsageGuide',
      tag: TAG,
      summary: 'How to use the S3 protocol: endpoint, signing region, client configurations',
      description: 'Public, like documentation. The examples carry this deployment’s endpoint.',
      access: publicAccess,
      response: { 200: S3Guide },
      handler: async () => s3Guide(endpoint(), acceptedRegions(), baseDomain, limits),
    }),
  ];
}
