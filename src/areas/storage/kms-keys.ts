import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { Credential } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import type { JobQueue } from '../../kernel/jobs/queue.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import { storageAuditor } from './audit.js';
import { SIGNING_REGION } from './catalogue.js';
import type { KmsDataKey, KmsKeyring } from './data-plane-contract.js';
import { storageErrors } from './errors.js';
import type { KmsKeyRepo } from './kms-repo.js';
import type { StorageKmsKeysTable } from './migrations.js';

/** One version of a key's material: 256 random bits, sealed with Fjord's data key. */
interface KmsKeyVersion {
  version: number;
  material: string;
  created_at: number;
}

/** The key S3 uses when a request names none, as AWS's `aws/s3` managed key. */
export const DEFAULT_ALIAS = 'alias/aws/s3';
const ALIAS = /^alias\/[A-Za-z0-9/_-]{1,250}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ARN = /^arn:aws:kms:([^:]*):([^:]+):(key\/.+|alias\/.+)$/;

/** The kernel job that destroys a key's material when its waiting period ends. */
export const KMS_DESTROY_JOB = 'storage.kms_key.destroy';
const DAY_MS = 86_400_000;
export type KmsKeyState = 'Enabled' | 'Disabled' | 'PendingDeletion';

const versionsOf = (row: StorageKmsKeysTable) => JSON.parse(row.versions) as KmsKeyVersion[];
/** What a wrapped data key is bound to: the key version and, when the writer gave one, its encryption context. */
const aad = (keyId: string, version: number, context: string | null) =>
  Buffer.from(`fjord-kms-v1:${keyId}:${version}${context === null ? '' : `:${context}`}`);

/**
 * SSE-KMS keys Fjord keeps per customer, at the scale of MinIO's KES: a key wraps the per-object
 * data keys S3 seals objects with. Rotation adds a version; every version keeps opening what it
 * wrapped. A disabled key neither wraps nor unwraps, so its objects cannot be read until it is
 * enabled again. Deletion is scheduled, as on AWS KMS: the key is `PendingDeletion` (no wrapping,
 * no unwrapping) for a waiting period of 7-30 days, during which it can be cancelled; then a job
 * on the clock destroys the material and its objects stay unreadable for good. Another
 * customer's key is reported as missing, never as forbidden.
 */
export class KmsKeyService implements KmsKeyring {
  private readonly repo: KmsKeyRepo;
  constructor(
    private readonly data: Units<KmsKeyRepo>,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly audit: AuditTrail,
    private readonly limits: Limits,
    private readonly planOf: (customerId: string) => Promise<string | undefined>,
    private readonly jobs: Pick<JobQueue, 'enqueue'>,
  ) {
    this.repo = data.read;
  }

  arn(customerId: string, keyId: string): string {
    return `arn:aws:kms:${SIGNING_REGION}:${customerId}:key/${keyId}`;
  }

  view(row: StorageKmsKeysTable) {
    const versions = versionsOf(row);
    return {
      key_id: row.id,
      arn: this.arn(row.customer_id, row.id),
      alias: row.alias,
      description: row.description,
      key_state: row.state as KmsKeyState,
      is_default: row.is_default === 1,
      current_version: versions.at(-1)!.version,
      versions: versions.map((v) => ({
        version: v.version,
        created_at: new Date(v.created_at).toISOString(),
      })),
      created_at: new Date(row.created_at).toISOString(),
      rotated_at: row.rotated_at === null ? null : new Date(row.rotated_at).toISOString(),
      deletion_date: row.deletion_date == null ? null : new Date(Number(row.deletion_date)).toISOString(),
    };
  }

  async list(customerId: string) {
    return (await this.repo.list(customerId)).map((r) => this.view(r));
  }

  async get(customerId: string, keyId: string) {
    return this.view(await this.find(customerId, keyId));
  }

  private newVersion(version: number): KmsKeyVersion {
    const material = this.secrets.seal(randomBytes(32).toString('base64'));
    return { version, material, created_at: this.clock.nowMs() };
  }

  private newRow(customerId: string, alias: string | null, description: string | null, isDefault: boolean) {
    const now = this.clock.nowMs();
    return {
      id: randomUUID(),
      customer_id: customerId,
      alias,
      description,
      state: 'Enabled',
      is_default: isDefault ? 1 : 0,
      versions: JSON.stringify([this.newVersion(1)]),
      created_at: now,
      updated_at: now,
      rotated_at: null,
      deletion_date: null,
    } satisfies StorageKmsKeysTable;
  }

  async create(
    customerId: string,
    actor: Credential | null,
    input: { alias: string | null; description: string | null },
  ) {
    const alias = input.alias;
    if (alias !== null && (!ALIAS.test(alias) || alias.startsWith('alias/aws/')))
      throw storageErrors.invalid('The alias is not valid.', [
        { path: '/body/alias', message: 'must be alias/ then letters, digits, / _ -, not alias/aws/…' },
      ]);
    const max = this.limits.of('storage.kms_keys', await this.planOf(customerId));
    const row = await this.data.run([`storage:kms-keys:${customerId}`], async (repo) => {
      if (max !== null && (await repo.count(customerId)) >= max) throw storageErrors.kmsKeyLimit(max);
      if (alias !== null && (await repo.byAlias(customerId, alias))) throw storageErrors.kmsAliasTaken(alias);
      const row = this.newRow(customerId, alias, input.description, false);
      await repo.insert(row);
      return row;
    });
    await this.record(customerId, actor, 'storage.kms_key.created', row.id, { alias });
    return this.view(row);
  }

  async rotate(customerId: string, actor: Credential | null, keyId: string) {
    const row = await this.data.run([`storage:kms-keys:${customerId}`], async (repo) => {
      const row = await this.find(customerId, keyId, repo);
      this.notPending(row);
      const versions = versionsOf(row);
      versions.push(this.newVersion(versions.at(-1)!.version + 1));
      const changes = { versions: JSON.stringify(versions), rotated_at: this.clock.nowMs() };
      await repo.update(row.id, { ...changes, updated_at: changes.rotated_at });
      return { ...row, ...changes };
    });
    await this.record(customerId, actor, 'storage.kms_key.rotated', row.id, {
      version: versionsOf(row).at(-1)!.version,
    });
    return this.view(row);
  }

  async setState(customerId: string, actor: Credential | null, keyId: string, state: 'Enabled' | 'Disabled') {
    const row = await this.data.run([`storage:kms-keys:${customerId}`], async (repo) => {
      const row = await this.find(customerId, keyId, repo);
      // As on AWS KMS: a key pending deletion is only taken back by cancelling the deletion.
      this.notPending(row);
      await repo.update(row.id, { state, updated_at: this.clock.nowMs() });
      return row;
    });
    await this.record(customerId, actor, `storage.kms_key.${state.toLowerCase()}`, row.id);
    return this.view({ ...row, state });
  }

  /**
   * Schedules the key's deletion `days` (7-30) from now: it stops wrapping and unwrapping at once,
   * so writes under it are refused from this commit on, and reads of its objects fail until the
   * deletion is cancelled. The default key cannot be deleted (as AWS-managed keys cannot).
   */
  async scheduleDeletion(customerId: string, actor: Credential | null, keyId: string, days: number) {
    const row = await this.data.run([`storage:kms-keys:${customerId}`], async (repo, { tx }) => {
      const row = await this.find(customerId, keyId, repo);
      if (row.is_default === 1) throw storageErrors.kmsKeyNotDeletable();
      this.notPending(row);
      const now = this.clock.nowMs();
      const changes = { state: 'PendingDeletion', deletion_date: now + days * DAY_MS, updated_at: now };
      await repo.update(row.id, changes);
      await this.jobs.enqueue(
        KMS_DESTROY_JOB,
        { customer_id: customerId, key_id: row.id },
        { db: tx, runAt: changes.deletion_date, uniqueKey: `${row.id}:${changes.deletion_date}` },
      );
      return { ...row, ...changes };
    });
    await this.record(customerId, actor, 'storage.kms_key.deletion_scheduled', row.id, {
      pending_window_days: days,
      deletion_date: new Date(row.deletion_date).toISOString(),
    });
    return this.view(row);
  }

  /** Takes back a scheduled deletion; the key is `Disabled` until enabled, as on AWS KMS. */
  async cancelDeletion(customerId: string, actor: Credential | null, keyId: string) {
    const row = await this.data.run([`storage:kms-keys:${customerId}`], async (repo) => {
      const row = await this.find(customerId, keyId, repo);
      if (row.state !== 'PendingDeletion')
        throw storageErrors.kmsKeyInvalidState(this.arn(customerId, row.id), 'is not pending deletion');
      const changes = { state: 'Disabled', deletion_date: null, updated_at: this.clock.nowMs() };
      await repo.update(row.id, changes);
      return { ...row, ...changes };
    });
    await this.record(customerId, actor, 'storage.kms_key.deletion_cancelled', row.id);
    return this.view(row);
  }

  /**
   * The `storage.kms_key.destroy` job: once the waiting period is over, the key's material is
   * destroyed for good and its alias freed. A job left from a cancelled deletion finds the key no
   * longer pending (or pending until a later date) and does nothing.
   */
  async destroyIfDue(customerId: string, keyId: string): Promise<boolean> {
    const now = this.clock.nowMs();
    const done = await this.data.run([`storage:kms-keys:${customerId}`], async (repo) => {
      const row = await repo.byId(customerId, keyId);
      if (!row || row.state !== 'PendingDeletion' || row.deletion_date == null) return false;
      if (Number(row.deletion_date) > now) return false;
      await repo.update(row.id, { state: 'Deleted', versions: '[]', alias: null, updated_at: now });
      return true;
    });
    if (done) await this.record(customerId, null, 'storage.kms_key.deleted', keyId);
    return done;
  }

  private notPending(row: StorageKmsKeysTable) {
    if (row.state === 'PendingDeletion')
      throw storageErrors.kmsKeyInvalidState(this.arn(row.customer_id, row.id), 'is pending deletion');
  }

  /** A key by id (UUID), ARN, or alias; another customer's ARN is not found. */
  private async find(customerId: string, ref: string, repo: KmsKeyRepo = this.repo) {
    let local = ref;
    const arn = ARN.exec(ref);
    if (arn) {
      if (arn[2] !== customerId) throw storageErrors.kmsKeyNotFound(ref);
      local = arn[3]!.startsWith('key/') ? arn[3]!.slice(4) : arn[3]!;
    }
    const row = local.startsWith('alias/')
      ? await repo.byAlias(customerId, local)
      : UUID.test(local)
        ? await repo.byId(customerId, local)
        : undefined;
    if (!row || row.state === 'Deleted') throw storageErrors.kmsKeyNotFound(ref);
    return row;
  }

  /** The customer's default key (`alias/aws/s3`), made on first use. */
  private async defaultKey(customerId: string) {
    const found = await this.repo.defaultKey(customerId);
    if (found) return found;
    const { row, made } = await this.data.run([`storage:kms-keys:${customerId}`], async (repo) => {
      const again = await repo.defaultKey(customerId);
      if (again) return { row: again, made: false };
      const row = this.newRow(customerId, DEFAULT_ALIAS, 'Default key for S3 (SSE-KMS)', true);
      await repo.insert(row);
      return { row, made: true };
    });
    if (made)
      await this.record(customerId, null, 'storage.kms_key.created', row.id, { alias: DEFAULT_ALIAS });
    return row;
  }

  private async usable(customerId: string, ref: string | null) {
    const row =
      ref === null || ref === DEFAULT_ALIAS
        ? await this.defaultKey(customerId)
        : await this.find(customerId, ref);
    return this.inUse(row);
  }

  /** A key wraps and unwraps only while enabled; S3 answers each other state as AWS does. */
  private inUse(row: StorageKmsKeysTable) {
    const arn = this.arn(row.customer_id, row.id);
    if (row.state === 'Disabled') throw storageErrors.kmsKeyDisabled(arn);
    if (row.state === 'PendingDeletion') throw storageErrors.kmsKeyInvalidState(arn, 'is pending deletion');
    if (row.state === 'Deleted') throw storageErrors.kmsKeyInvalidState(arn, 'has been deleted');
    return row;
  }

  async resolve(customerId: string, ref: string | null) {
    const row = await this.usable(customerId, ref);
    return { keyId: row.id, arn: this.arn(customerId, row.id) };
  }

  async generateDataKey(
    customerId: string,
    ref: string | null,
    context: string | null = null,
  ): Promise<KmsDataKey> {
    const row = await this.usable(customerId, ref);
    const current = versionsOf(row).at(-1)!;
    const plaintext = randomBytes(32);
    const nonce = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.material(current), nonce);
    c.setAAD(aad(row.id, current.version, context));
    const body = Buffer.concat([c.update(plaintext), c.final()]);
    return {
      keyId: row.id,
      arn: this.arn(customerId, row.id),
      version: current.version,
      plaintext,
      wrapped: Buffer.concat([nonce, body, c.getAuthTag()]).toString('base64'),
    };
  }

  async decryptDataKey(
    customerId: string,
    keyId: string,
    version: number,
    wrapped: string,
    context: string | null = null,
  ): Promise<Buffer> {
    // By id, a destroyed key included: its objects are refused as sealed under a deleted key.
    const found = UUID.test(keyId) ? await this.repo.byId(customerId, keyId) : undefined;
    const row = found ? this.inUse(found) : await this.usable(customerId, keyId);
    const v = versionsOf(row).find((x) => x.version === version);
    if (!v) throw storageErrors.kmsKeyNotFound(keyId);
    const raw = Buffer.from(wrapped, 'base64');
    const d = createDecipheriv('aes-256-gcm', this.material(v), raw.subarray(0, 12));
    d.setAAD(aad(row.id, version, context));
    d.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]);
  }

  private material(v: KmsKeyVersion): Buffer {
    return Buffer.from(this.secrets.open(v.material), 'base64');
  }

  private record(...entry: Parameters<ReturnType<typeof storageAuditor>>) {
    return storageAuditor(this.audit, 'storage_kms_key')(...entry);
  }
}
