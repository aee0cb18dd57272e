import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import type { SecretBox } from '../../kernel/secrets.js';
import { fromJson, toBool } from '../../kernel/store/dialect.js';
import { ACCOUNT_ACTIONS, LEGACY_REGION_SPELLINGS, SIGNING_REGION, STORAGE_REGION } from './catalogue.js';
import type { StorageChangeNotices } from './change-notices.js';
import type {
  AccessKeyRecord,
  BucketAccessChange,
  BucketDirectory,
  BucketRecord,
  CorsRule,
  KmsKeyring,
  LifecycleRule,
  ObjectLockDefault,
} from './data-plane-contract.js';
import { storageErrors } from './errors.js';
import type { StorageRepo } from './repo.js';
import type { StorageService } from './service.js';
import { isS3BucketName } from './validation.js';
import { storedGrants } from './views.js';

/** How often at most `last_used_at` is written for one key: a busy key must not write per request. */
const KEY_USE_WRITE_INTERVAL_MS = 60_000;

/**
 * The control plane as the S3 data plane sees it: keys with their decrypted secrets and grants,
 * bucket records, and the bucket operations S3 itself can perform. Reads go to the store every
 * time; the data plane may cache and drop entries on the change notices.
 */
export class ControlPlaneDirectory implements BucketDirectory {
  private readonly lastWritten = new Map<string, number>();

  /** The customers' SSE-KMS keys (set by the area once built). */
  kms?: KmsKeyring;

  constructor(
    private readonly repo: StorageRepo,
    private readonly service: StorageService,
    private readonly identity: IdentityService,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly notices: StorageChangeNotices,
    private readonly onError: (err: unknown) => void,
  ) {}

  async findAccessKey(accessKeyId: string): Promise<AccessKeyRecord | null> {
    const row = await this.repo.keyByAccessKeyId(accessKeyId);
    if (!row) return null;
    // A suspended customer's keys stop working, as revoked ones do (the rule of identity.isActive).
    const customer = await this.identity.getCustomer(row.customer_id);
    if (!customer || !(await this.identity.isActive(customer.id))) return null;
    let grants: AccessKeyRecord['grants'];
    let accountActions: string[] = [];
    if (row.kind === 'bucket') {
      const bucket = row.bucket_id ? await this.repo.bucketByIdForKey(row.bucket_id) : undefined;
      if (!bucket) return null;
      grants = [
        {
          bucket: bucket.name,
          actions: toBool(row.full_access) ? 'all' : fromJson<string[]>(row.actions, []),
        },
      ];
    } else {
      accountActions = fromJson<string[]>(row.actions, []).filter((a) => ACCOUNT_ACTIONS.includes(a));
      grants = storedGrants(row).map((g) => ({
        bucket: g.bucket,
        actions: g.full_access ? 'all' : g.actions,
      }));
    }
    let secretKey: string;
    try {
      secretKey = this.secrets.open(row.secret_sealed);
    } catch (err) {
      // Sealed under another data key (FJORD_DATA_KEY differs between processes): unusable.
      this.onError(err);
      return null;
    }
    return {
      accessKeyId: row.access_key_id,
      secretKey,
      customerId: row.customer_id,
      customerDisplayName: displayName(customer),
      kind: row.kind === 'account' ? 'account' : 'bucket',
      grants,
      mayCreateBuckets: accountActions.includes('s3:CreateBucket'),
      accountActions,
    };
  }

  findBucket(name: string): Promise<BucketRecord | null> {
    return this.service.findBucket(name);
  }

  listBuckets(customerId: string): Promise<BucketRecord[]> {
    return this.service.listBucketRecords(customerId);
  }

  async createBucketViaS3(
    customerId: string,
    name: string,
    region: string,
    accessKeyId?: string,
    objectLockEnabled?: boolean,
  ): Promise<BucketRecord> {
    if (!isS3BucketName(name)) {
      throw storageErrors.invalid('Invalid bucket name.', [
        { path: '/bucket', message: '3-63 lowercase letters, digits, dots and hyphens' },
      ]);
    }
    return this.service.createBucketViaS3(
      customerId,
      name,
      s3Region(region),
      accessKeyId ?? null,
      objectLockEnabled ?? false,
    );
  }

  async deleteBucketViaS3(customerId: string, name: string): Promise<void> {
    await this.service.deleteBucket(customerId, null, name);
  }

  async accountExists(accountId: string): Promise<boolean> {
    return (await this.identity.getCustomer(accountId)) !== undefined;
  }

  async putCors(bucketName: string, rules: CorsRule[]): Promise<void> {
    const row = await this.service.bucketForDataPlane(bucketName);
    await this.service.settings.putCors(row.customer_id, null, bucketName, rules, 's3');
  }

  async deleteCors(bucketName: string): Promise<void> {
    const row = await this.service.bucketForDataPlane(bucketName);
    await this.service.settings.deleteCors(row.customer_id, null, bucketName);
  }

  async putVersioning(bucketName: string, state: 'Enabled' | 'Suspended'): Promise<void> {
    const row = await this.service.bucketForDataPlane(bucketName);
    await this.service.settings.putVersioning(row.customer_id, null, bucketName, state);
  }

  putBucketTags(bucketName: string, tags: Record<string, string> | null): Promise<void> {
    return this.service.settings.putBucketTags(bucketName, tags);
  }

  async putLifecycle(bucketName: string, rules: LifecycleRule[] | null): Promise<void> {
    const row = await this.service.bucketForDataPlane(bucketName);
    if (rules === null) await this.service.settings.deleteLifecycle(row.customer_id, null, bucketName);
    else await this.service.settings.putLifecycle(row.customer_id, null, bucketName, rules);
  }

  putDefaultEncryption(
    bucketName: string,
    algorithm: 'AES256' | 'aws:kms' | null,
    kmsKeyId: string | null = null,
  ): Promise<void> {
    return this.service.settings.putDefaultEncryption(bucketName, algorithm, kmsKeyId);
  }

  putBucketAccess(bucketName: string, change: BucketAccessChange): Promise<void> {
    return this.service.settings.putBucketAccess(bucketName, change);
  }

  putObjectLockDefault(bucketName: string, rule: ObjectLockDefault | null, enable?: boolean): Promise<void> {
    return this.service.settings.putObjectLockDefault(bucketName, rule, enable);
  }

  /** Fire and forget for the data plane; the promise (never rejected) lets a test wait for the write. */
  recordKeyUse(accessKeyId: string): Promise<void> {
    const now = this.clock.nowMs();
    const last = this.lastWritten.get(accessKeyId);
    if (last !== undefined && now - last < KEY_USE_WRITE_INTERVAL_MS) return Promise.resolve();
    if (this.lastWritten.size > 10_000) this.lastWritten.clear();
    this.lastWritten.set(accessKeyId, now);
    return this.repo.touchKey(accessKeyId, now).then(() => {}, this.onError);
  }

  onBucketChanged(listener: (bucketName: string) => void): void {
    this.notices.onBucketChanged(listener);
  }

  onAccessKeyChanged(listener: (accessKeyId: string) => void): void {
    this.notices.onKeyChanged(listener);
    // A suspension or reactivation changes whether every key of that customer works; drop them
    // all (rare, and cheaper than tracking which cached keys belong to whom).
    this.identity.onCustomerStatusChanged(() => listener(''));
  }
}

/** S3 clients send the signing region (or nothing) as LocationConstraint; all mean `no`. */
function s3Region(region: string): string {
  if (region === '' || region === SIGNING_REGION || region === 'us-east-1') return STORAGE_REGION;
  if (region === STORAGE_REGION || LEGACY_REGION_SPELLINGS.includes(region)) return STORAGE_REGION;
  throw storageErrors.unknownRegion(region);
}

function displayName(c: {
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
}) {
  const person = [c.first_name, c.last_name].filter(Boolean).join(' ');
  return c.company || person || c.email;
}
