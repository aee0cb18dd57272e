import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { Credential } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { SecretBox } from '../../kernel/secrets.js';
import { fromBool, insertUnique, toJson } from '../../kernel/store/dialect.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import { storageAuditor } from './audit.js';
import { ACCOUNT_ACTIONS, SIGNING_REGION } from './catalogue.js';
import type { StorageChangeNotices } from './change-notices.js';
import { storageErrors } from './errors.js';
import type { StorageBucketsTable, StorageKeysTable } from './migrations.js';
import type { StorageRepo } from './repo.js';
import { checkAccountActions, checkBucketActions, newAccessKeyId, newSecretKey } from './validation.js';
import { accountKeyView, bucketKeyView, type StoredGrant, storedGrants } from './views.js';

export interface GrantInput {
  bucket_name: string;
  actions?: string[] | null;
}

/**
 * S3 access keys: bucket keys (one bucket, `actions` on it) and account keys (several buckets with
 * actions per bucket, plus account-level actions). Secrets are sealed with the data key, because
 * SigV4 verification needs them back; the API shows them once.
 */
export class AccessKeyService {
  private readonly repo: StorageRepo;
  constructor(
    private readonly data: Units<StorageRepo>,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly audit: AuditTrail,
    private readonly notices: StorageChangeNotices,
    private readonly endpoint: () => string,
    private readonly limits: Limits,
  ) {
    this.repo = data.read;
  }

  /** A fresh key row with its secret; `secret` is returned to the caller once. */
  private newKey(
    customerId: string,
    fields: Pick<
      StorageKeysTable,
      'kind' | 'bucket_id' | 'name' | 'description' | 'full_access' | 'actions' | 'grants'
    > &
      Partial<Pick<StorageKeysTable, 'is_default' | 'is_legacy'>>,
  ): { row: StorageKeysTable; secret: string } {
    const secret = newSecretKey();
    const now = this.clock.nowMs();
    return {
      secret,
      row: {
        id: newId(),
        customer_id: customerId,
        access_key_id: newAccessKeyId(),
        secret_sealed: this.secrets.seal(secret),
        is_default: 0,
        is_legacy: 0,
        created_at: now,
        updated_at: now,
        last_used_at: null,
        ...fields,
      },
    };
  }

  /** Inserts, retrying the astronomically unlikely access-key-id collision. */
  private async insert(
    make: () => { row: StorageKeysTable; secret: string },
    repo: StorageRepo = this.repo,
  ): Promise<{ row: StorageKeysTable; secret: string }> {
    for (let attempt = 0; ; attempt++) {
      const key = make();
      try {
        await insertUnique(
          () => repo.insertKey(key.row),
          () => new Error('access key id collision'),
        );
        return key;
      } catch (err) {
        if (attempt >= 3 || (err as Error).message !== 'access key id collision') throw err;
      }
    }
  }

  /** The default key made with a bucket (inside the bucket's transaction). */
  createDefaultKey(repo: StorageRepo, bucket: StorageBucketsTable) {
    return this.insert(
      () =>
        this.newKey(bucket.customer_id, {
          kind: 'bucket',
          bucket_id: bucket.id,
          name: 'default',
          description: 'Created with the bucket',
          full_access: 1,
          actions: '[]',
          grants: '[]',
          is_default: 1,
        }),
      repo,
    );
  }

  // Bucket keys

  async listBucketKeys(bucket: StorageBucketsTable) {
    return (await this.repo.keysOfBucket(bucket.id)).map(bucketKeyView);
  }

  async createBucketKey(
    bucket: StorageBucketsTable,
    actor: Credential,
    input: { name: string; description: string | null; actions: string[] | null },
  ) {
    const actions = input.actions === null ? null : checkBucketActions(input.actions, '/body/actions');
    const max = this.limits.of('storage.keys_per_bucket');
    // Counted and written under the bucket's lock: 110 requests at once make exactly the limit.
    const { row, secret } = await this.data.run([`storage:bucket-keys:${bucket.id}`], async (repo) => {
      if (max !== null && (await repo.countKeysOfBucket(bucket.id)) >= max)
        throw storageErrors.keyLimit(max, 'bucket');
      return this.insert(
        () =>
          this.newKey(bucket.customer_id, {
            kind: 'bucket',
            bucket_id: bucket.id,
            name: input.name.trim(),
            description: input.description,
            full_access: fromBool(actions === null),
            actions: toJson(actions ?? []),
            grants: '[]',
          }),
        repo,
      );
    });
    await this.record(bucket.customer_id, actor, 'storage.key.created', row.id, {
      bucket_name: bucket.name,
      access_key: row.access_key_id,
      actions: actions ?? 'all',
    });
    const { is_default: _d, last_used_at: _l, ...view } = bucketKeyView(row);
    return { ...view, secret_key: secret, endpoint: this.endpoint() };
  }

  async updateBucketKey(
    bucket: StorageBucketsTable,
    actor: Credential,
    keyId: string,
    input: { name?: string; description?: string | null; actions?: string[] | null },
  ) {
    const row = await this.repo.keyOfBucket(bucket.id, keyId);
    if (!row) throw storageErrors.keyNotFound();
    const changes: Partial<StorageKeysTable> = {};
    if (input.name !== undefined) changes.name = input.name.trim();
    if (input.description !== undefined) changes.description = input.description;
    if (input.actions !== undefined) {
      const actions = input.actions === null ? null : checkBucketActions(input.actions, '/body/actions');
      changes.full_access = fromBool(actions === null);
      changes.actions = toJson(actions ?? []);
    }
    await this.repo.updateKey(row.id, changes, this.clock.nowMs());
    await this.notices.keyChanged(row.access_key_id);
    await this.record(bucket.customer_id, actor, 'storage.key.updated', row.id, {
      bucket_name: bucket.name,
      fields: Object.keys(changes),
    });
    return bucketKeyView({ ...row, ...changes });
  }

  async deleteBucketKey(bucket: StorageBucketsTable, actor: Credential, keyId: string) {
    const row = await this.repo.keyOfBucket(bucket.id, keyId);
    if (!row) throw storageErrors.keyNotFound();
    if (row.is_default) throw storageErrors.defaultKeyUndeletable();
    await this.repo.deleteKey(row.id);
    await this.notices.keyChanged(row.access_key_id);
    await this.record(bucket.customer_id, actor, 'storage.key.deleted', row.id, { bucket_name: bucket.name });
    return { success: true, message: `Key ${row.name} deleted; it stops working at once.` };
  }

  // Account keys

  async listAccountKeys(customerId: string) {
    return (await this.repo.accountKeys(customerId)).map(accountKeyView);
  }

  async getAccountKey(customerId: string, keyId: string) {
    const row = await this.repo.accountKey(customerId, keyId);
    if (!row) throw storageErrors.keyNotFound();
    return accountKeyView(row);
  }

  async createAccountKey(
    customerId: string,
    actor: Credential,
    input: { name: string; description: string | null; actions: string[]; buckets: GrantInput[] },
  ) {
    const actions = checkAccountActions(input.actions, '/body/actions');
    const grants = await this.checkGrants(customerId, input.buckets);
    const max = this.limits.of('storage.account_keys');
    const { row, secret } = await this.data.run([`storage:account-keys:${customerId}`], async (repo) => {
      if (max !== null && (await repo.countAccountKeys(customerId)) >= max)
        throw storageErrors.keyLimit(max, 'account');
      return this.insert(
        () =>
          this.newKey(customerId, {
            kind: 'account',
            bucket_id: null,
            name: input.name.trim(),
            description: input.description,
            full_access: 0,
            actions: toJson(actions),
            grants: toJson(grants),
          }),
        repo,
      );
    });
    await this.record(customerId, actor, 'storage.account_key.created', row.id, {
      access_key: row.access_key_id,
      actions,
      buckets: grants.map((g) => g.bucket),
    });
    const { last_used_at: _l, ...view } = accountKeyView(row);
    return { ...view, secret_key: secret, endpoint: this.endpoint() };
  }

  async updateAccountKey(
    customerId: string,
    actor: Credential,
    keyId: string,
    input: { name?: string; description?: string | null; actions?: string[]; buckets?: GrantInput[] },
  ) {
    const row = await this.repo.accountKey(customerId, keyId);
    if (!row) throw storageErrors.keyNotFound();
    const changes: Partial<StorageKeysTable> = {};
    if (input.name !== undefined) changes.name = input.name.trim();
    if (input.description !== undefined) changes.description = input.description;
    if (input.actions !== undefined)
      changes.actions = toJson(checkAccountActions(input.actions, '/body/actions'));
    if (input.buckets !== undefined)
      changes.grants = toJson(await this.checkGrants(customerId, input.buckets));
    await this.repo.updateKey(row.id, changes, this.clock.nowMs());
    await this.notices.keyChanged(row.access_key_id);
    await this.record(customerId, actor, 'storage.account_key.updated', row.id, {
      fields: Object.keys(changes),
    });
    return accountKeyView({ ...row, ...changes });
  }

  async deleteAccountKey(customerId: string, actor: Credential, keyId: string) {
    const row = await this.repo.accountKey(customerId, keyId);
    if (!row) throw storageErrors.keyNotFound();
    await this.repo.deleteKey(row.id);
    await this.notices.keyChanged(row.access_key_id);
    await this.record(customerId, actor, 'storage.account_key.deleted', row.id);
    return { success: true, message: `Key ${row.name} deleted; it stops working at once.` };
  }

  /**
   * The older `GET /v1/storage/credentials`: one account key with every right over every bucket,
   * made on first use. That form returns the secret on every call, so it is unsealed here.
   */
  async legacyCredentials(customerId: string, actor: Credential) {
    let row = await this.repo.legacyKey(customerId);
    if (!row) {
      const made = await this.insert(() =>
        this.newKey(customerId, {
          kind: 'account',
          bucket_id: null,
          name: 'credentials',
          description: 'Made by GET /v1/storage/credentials (older form)',
          full_access: 0,
          actions: toJson([...ACCOUNT_ACTIONS]),
          grants: toJson([{ bucket: '*', full_access: true, actions: [] } satisfies StoredGrant]),
          is_legacy: 1,
        }),
      );
      row = made.row;
      await this.record(customerId, actor, 'storage.account_key.created', row.id, {
        access_key: row.access_key_id,
        legacy: true,
      });
    }
    return {
      access_key_id: row.access_key_id,
      secret_access_key: this.secrets.open(row.secret_sealed),
      endpoint_url: this.endpoint(),
      region: SIGNING_REGION,
    };
  }

  /** Drops a deleted bucket from every account key's grants (in the deletion's transaction). */
  async forgetBucket(repo: StorageRepo, customerId: string, bucketName: string): Promise<string[]> {
    const changed: string[] = [];
    for (const row of await repo.accountKeys(customerId)) {
      const grants = storedGrants(row);
      const kept = grants.filter((g) => g.bucket !== bucketName);
      if (kept.length === grants.length) continue;
      await repo.updateKey(row.id, { grants: toJson(kept) }, this.clock.nowMs());
      changed.push(row.access_key_id);
    }
    return changed;
  }

  /** Gives an account key full access to a bucket it created through S3 (as Garage does). */
  async grantCreatedBucket(repo: StorageRepo, accessKeyId: string, bucketName: string) {
    const row = await repo.keyByAccessKeyId(accessKeyId);
    if (!row || row.kind !== 'account') return;
    const grants = storedGrants(row).filter((g) => g.bucket !== bucketName);
    grants.push({ bucket: bucketName, full_access: true, actions: [] });
    await repo.updateKey(row.id, { grants: toJson(grants) }, this.clock.nowMs());
  }

  private async checkGrants(customerId: string, input: GrantInput[]): Promise<StoredGrant[]> {
    const names = [...new Set(input.map((g) => g.bucket_name).filter((n) => n !== '*'))];
    const known = new Set((await this.repo.liveBucketsByName(customerId, names)).map((b) => b.name));
    const seen = new Set<string>();
    const problems: { path: string; message: string }[] = [];
    const grants = input.map((g, i): StoredGrant => {
      if (g.bucket_name !== '*' && !known.has(g.bucket_name)) {
        problems.push({ path: `/body/buckets/${i}/bucket_name`, message: 'no such bucket on this account' });
      }
      if (seen.has(g.bucket_name)) {
        problems.push({ path: `/body/buckets/${i}/bucket_name`, message: 'bucket named twice' });
      }
      seen.add(g.bucket_name);
      const actions =
        g.actions === undefined || g.actions === null
          ? null
          : checkBucketActions(g.actions, `/body/buckets/${i}/actions`);
      return { bucket: g.bucket_name, full_access: actions === null, actions: actions ?? [] };
    });
    if (problems.length > 0) throw storageErrors.invalid('Invalid bucket grants.', problems);
    return grants;
  }

  private record(...entry: Parameters<ReturnType<typeof storageAuditor>>) {
    return storageAuditor(this.audit, 'storage_key')(...entry);
  }
}
