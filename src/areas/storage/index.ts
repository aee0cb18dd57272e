import { s3EndpointUrl } from '../../config/config.js';
import type { Kernel, RoleServer } from '../../kernel/kernel.js';
import { unitsOf } from '../../kernel/store/unit-of-work.js';
import type { AreaModule } from '../../kernel/wiring.js';
import { defineArea } from '../wiring.js';
import { AccessKeyService } from './access-keys.js';
import { ControlPlaneDirectory } from './bucket-directory.js';
import { SIGNING_REGION } from './catalogue.js';
import { StorageChangeNotices } from './change-notices.js';
import type {
  BucketDirectory,
  InternalObjects,
  ObjectStats,
  OwnerObjectRequest,
} from './data-plane-contract.js';
import { KmsKeyService } from './kms-keys.js';
import { KmsKeyRepo } from './kms-repo.js';
import {
  BLOB_SWEEP_JOB,
  PACK_COMPACTION_EVERY_S,
  PACK_COMPACTION_JOB,
  registerBlobSweepJob,
  registerKmsDestroyJob,
  registerLifecycleJob,
  registerPackCompactionJob,
} from './lifecycle-job.js';
import { storageMigrations } from './migrations.js';
import { StorageRepo } from './repo.js';
import { storageRoutes } from './routes/index.js';
import { objectUploadRoutes } from './routes/object-uploads.js';
import { objectRoutes, ownerRunner } from './routes/objects.js';
import { createDataPlane, objectMigrations } from './s3/index.js';
import { StorageService } from './service.js';

/** What the S3 data plane hands back when built against the control plane's directory. */
export interface DataPlane {
  stats: ObjectStats;
  servers: RoleServer[];
  onReset?(): Promise<void>;
  /** The port the S3 listener is bound to, once started (FJORD_S3_PORT=0 picks one). */
  boundPort?(): number | null;
  /** Regions S3 requests may be signed for. */
  signingRegions?: readonly string[];
  /** A bucket of Fjord's own, in this data plane (see `InternalObjects`). */
  internalBucket(purpose: string): InternalObjects;
  /** Object requests by a bucket's owner through the API (the console's object browser). */
  serveOwnerRequest?: OwnerObjectRequest;
}

export type DataPlaneFactory = (kernel: Kernel, directory: BucketDirectory) => DataPlane | Promise<DataPlane>;

export function storageAreaWith(createDataPlane: DataPlaneFactory): AreaModule {
  return defineArea({
    name: 'storage',
    // The data plane's tables (objects, versions, uploads) migrate with the area.
    migrations: { ...storageMigrations, ...objectMigrations },
    async setup(kernel) {
      const data = unitsOf(kernel.store, StorageRepo.over);
      const repo = data.read;
      const notices = new StorageChangeNotices(kernel.store);
      let dataPlane: DataPlane | null = null;
      const endpoint = () => s3EndpointUrl(kernel.config, dataPlane?.boundPort?.() ?? undefined);
      const keys = new AccessKeyService(
        data,
        kernel.secrets,
        kernel.clock,
        kernel.audit,
        notices,
        endpoint,
        kernel.limits,
      );
      const service = new StorageService(
        data,
        keys,
        () => {
          if (!dataPlane) throw new Error('the storage data plane is not built yet');
          return dataPlane.stats;
        },
        kernel.clock,
        kernel.audit,
        notices,
        endpoint,
        kernel.limits,
        kernel.config.s3.blockPublicAccess.includes('BlockPublicAcls'),
        kernel.config.s3.defaultObjectOwnership,
      );
      const directory = new ControlPlaneDirectory(
        repo,
        service,
        kernel.identity,
        kernel.secrets,
        kernel.clock,
        notices,
        (err) => kernel.log.warn({ err }, 'storage directory'),
      );
      service.directory = directory;
      const kms = new KmsKeyService(
        unitsOf(kernel.store, KmsKeyRepo.over),
        kernel.secrets,
        kernel.clock,
        kernel.audit,
        kernel.limits,
        async (customerId) => (await kernel.identity.getCustomer(customerId))?.plan,
        kernel.jobs,
      );
      registerKmsDestroyJob(kernel, kms);
      directory.kms = kms;
      dataPlane = await createDataPlane(kernel, directory);
      const plane = dataPlane;
      service.internalBucket = (purpose) => plane.internalBucket(purpose);
      registerLifecycleJob(kernel, service, plane.stats);
      registerBlobSweepJob(kernel, plane.stats);
      registerPackCompactionJob(kernel, plane.stats);
      await scheduleLifecycle(kernel);
      kernel.registry.addCredentialKind({
        name: 's3-access-key',
        area: 'storage',
        doc: 'AWS Signature V4 on the S3 endpoint (bucket and account access keys)',
      });
      kernel.registry.addServiceProvider(async (customerId) =>
        (await service.listBuckets(customerId)).map((b) => ({
          id: b.bucket_name,
          service_type: 'storage',
          name: b.bucket_name,
          status: 'active',
          region: b.region,
          created_at: b.created_at,
          metadata: { tier: b.storage_tier, is_public: b.is_public, total_objects: b.total_objects },
          api: {
            kind: 's3',
            openapi: `${kernel.baseUrl()}/openapi.json`,
            docs: `${kernel.baseUrl()}/storage/s3`,
            base_url: endpoint(),
          },
        })),
      );
      const signingRegions = plane.signingRegions ?? [SIGNING_REGION, 'us-east-1'];
      return {
        service,
        routes: [
          ...storageRoutes(service, kms, endpoint, () => signingRegions, kernel.config.s3.baseDomain, {
            maxUploadBytes: kernel.limits.of('storage.upload_bytes'),
            maxConnectionsPerKey: kernel.limits.of('storage.connections_per_key'),
          }),
          ...(plane.serveOwnerRequest ? objectRoutes(service, plane.serveOwnerRequest) : []),
          ...(plane.serveOwnerRequest
            ? objectUploadRoutes(ownerRunner(service, plane.serveOwnerRequest))
            : []),
        ],
        servers: plane.servers,
        async onReset() {
          await plane.onReset?.();
          notices.everythingChanged();
          await scheduleLifecycle(kernel);
        },
      };
    },
  });
}

async function scheduleLifecycle(kernel: Kernel) {
  await kernel.jobs.schedule('storage.lifecycle', 'storage.lifecycle', 3600);
  await kernel.jobs.schedule(BLOB_SWEEP_JOB, BLOB_SWEEP_JOB, 86_400);
  await kernel.jobs.schedule(PACK_COMPACTION_JOB, PACK_COMPACTION_JOB, PACK_COMPACTION_EVERY_S);
}

/** The storage area with its S3 data plane (objects/, s3/). */
export const storageArea = storageAreaWith(createDataPlane);
