import { join } from 'node:path';
import { listenerUrl, s3EndpointUrl } from '../../../config/config.js';
import type { Kernel, RoleServer } from '../../../kernel/kernel.js';
import type { BucketDirectory, ObjectStats, OwnerObjectRequest } from '../data-plane-contract.js';
import { BandwidthMeter } from '../objects/bandwidth.js';
import type { BlobStore } from '../objects/drivers/blob-store.js';
import { FsBlobStore } from '../objects/drivers/fs-blob-store.js';
import { S3BlobStore } from '../objects/drivers/s3-blob-store.js';
import { InternalBucket } from '../objects/internal-bucket.js';
import { INTERNAL_OWNER } from '../objects/internal-owner.js';
import { ObjectStore } from '../objects/object-store.js';
import { ObjectWrites } from '../objects/object-writes.js';
import { DataPlaneStats } from '../objects/stats.js';
import type { S3Env } from './context.js';
import { DirectoryCache } from './directory-cache.js';
import { serveOwnerRequest } from './owner-requests.js';
import { operatorBlock } from './permissions.js';
import { S3Server } from './server.js';

export { objectMigrations } from '../objects/migrations.js';

const GiB = 1024 ** 3;

export interface BuiltDataPlane {
  stats: ObjectStats & Required<Pick<ObjectStats, 'applyLifecycle'>>;
  servers: RoleServer[];
  onReset(): Promise<void>;
  boundPort(): number | null;
  signingRegions: readonly string[];
  internalBucket(purpose: string): InternalBucket;
  serveOwnerRequest: OwnerObjectRequest;
  /** For tests and benchmarks. */
  env: S3Env;
}

function blobStoreOf(kernel: Kernel): BlobStore {
  const s3 = kernel.config.s3;
  if (s3.driver === 's3') {
    const up = s3.upstream!;
    kernel.registry.addBackend?.({
      area: 'storage',
      name: 'object data',
      driver: 's3',
      detail: `${up.endpoint} bucket ${up.bucket}`,
      simulated: false,
    });
    return new S3BlobStore(up);
  }
  const root = join(kernel.config.dataDir, 'objects');
  kernel.registry.addBackend?.({
    area: 'storage',
    name: 'object data',
    driver: 'fs',
    detail: root,
    simulated: false,
  });
  return new FsBlobStore(root, s3.fsync, () => kernel.clock.nowMs());
}

/** The S3 data plane: objects, versions, multipart uploads and the S3 protocol server. */
export function createDataPlane(kernel: Kernel, directory: BucketDirectory): BuiltDataPlane {
  const blobs = blobStoreOf(kernel);
  // The published limits (GET /storage/s3, docs/limits.md) and the enforced ones are one row each.
  const maxUploadBytes = kernel.limits.of('storage.upload_bytes') ?? Number.MAX_SAFE_INTEGER;
  const maxConnectionsPerKey = kernel.limits.of('storage.connections_per_key') ?? Number.MAX_SAFE_INTEGER;
  const objects = new ObjectStore(
    new ObjectWrites(kernel.store),
    blobs,
    kernel.clock,
    kernel.log.child({ area: 's3' }),
    maxUploadBytes,
    // Fjord's own buckets (snapshots, GPU outputs) belong to no customer and no plan.
    async (customerId) =>
      customerId === INTERNAL_OWNER
        ? null
        : kernel.limits.of('storage.bytes', (await kernel.identity.getCustomer(customerId))?.plan),
    kernel.secrets,
  );
  const cache = new DirectoryCache(directory);
  const env: S3Env = {
    objects,
    directory,
    cache,
    clock: kernel.clock,
    log: kernel.log.child({ area: 's3' }),
    metrics: kernel.metrics,
    bandwidth: new BandwidthMeter(
      kernel.store,
      () => kernel.clock.nowMs(),
      async (customerId) =>
        customerId === INTERNAL_OWNER
          ? null
          : kernel.limits.of(
              'storage.bandwidth_bytes_per_month',
              (await kernel.identity.getCustomer(customerId))?.plan,
            ),
      kernel.log.child({ area: 's3' }),
    ),
    secrets: kernel.secrets,
    settings: {
      regions: kernel.config.s3.regions,
      baseDomain: kernel.config.s3.baseDomain,
      maxObjectBytes: 5 * GiB,
      maxUploadBytes,
      maxConnectionsPerKey,
      publicAccessBlock: operatorBlock(kernel.config.s3.blockPublicAccess),
      defaultObjectOwnership: kernel.config.s3.defaultObjectOwnership,
    },
  };
  const server = new S3Server(
    env,
    kernel.config.host,
    kernel.config.ports.s3,
    (port) => {
      kernel.registry.addListener?.({
        role: 's3',
        protocol: kernel.config.tls ? 'https' : 'http',
        address: listenerUrl(kernel.config, port),
      });
    },
    kernel.config.tls,
  );
  return {
    stats: new DataPlaneStats(objects),
    servers: [server],
    async onReset() {
      cache.clear();
      await blobs.clear();
    },
    boundPort: () => server.boundPort,
    signingRegions: kernel.config.s3.regions,
    internalBucket: (purpose) =>
      new InternalBucket(objects, purpose, {
        secrets: kernel.secrets,
        endpoint: () => s3EndpointUrl(kernel.config, server.boundPort ?? undefined),
        region: kernel.config.s3.regions[0]!,
        nowMs: () => kernel.clock.nowMs(),
      }),
    serveOwnerRequest: (req, res, request) => serveOwnerRequest(env, req, res, request),
    env,
  };
}
