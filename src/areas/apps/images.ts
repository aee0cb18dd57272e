import type { Readable } from 'node:stream';
import type { IdentityService } from '../../kernel/auth/identity.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { Store } from '../../kernel/store/store.js';
import type { InternalObjects } from '../storage/service.js';
import { appsErrors } from './errors.js';
import type { AppsImageUploadsTable } from './migrations.js';
import { AppsRepo } from './repo.js';

/** How long a presigned upload URL accepts the archive. */
export const IMAGE_UPLOAD_EXPIRES_SECONDS = 3600;

const archiveKey = (id: string) => `images/${id}.tar`;
/** The local reference an uploaded image is loaded under in the runtime's store. */
export const uploadedImageRef = (id: string) => `localhost/fjord-upload/${id}:latest`;

/**
 * Container images uploaded as OCI or Docker archives through a presigned PUT into Fjord's own
 * object storage (an internal bucket): the path that needs no registry. A revision names the
 * upload; the runtime loads the archive when it first starts the image.
 */
export class AppImages {
  private readonly repo: AppsRepo;
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly identity: IdentityService,
    private readonly limits: Limits,
    private readonly files: InternalObjects,
  ) {
    this.repo = AppsRepo.of(store);
  }

  async createUpload(customerId: string, sizeBytes: number) {
    const tier = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const maxBytes = this.limits.of('apps.image_upload_bytes', tier);
    if (maxBytes !== null && sizeBytes > maxBytes) throw appsErrors.uploadTooLarge(maxBytes);
    const maxUploads = this.limits.of('apps.image_uploads', tier);
    const id = newId();
    const now = this.clock.nowMs();
    const row: AppsImageUploadsTable = {
      id,
      customer_id: customerId,
      max_bytes: sizeBytes,
      status: 'awaiting_upload',
      expires_at: now + IMAGE_UPLOAD_EXPIRES_SECONDS * 1000,
      uploaded_at: null,
      created_at: now,
    };
    await this.store.unitOfWork({ locks: [`apps:images:${customerId}`] }, async ({ tx }) => {
      const repo = AppsRepo.over(tx);
      if (maxUploads !== null && (await repo.countLiveUploads(customerId, now)) >= maxUploads)
        throw appsErrors.quotaOf('image uploads', maxUploads);
      await repo.insertUpload(row);
    });
    return this.view(row, this.files.presignPut(archiveKey(id), sizeBytes, IMAGE_UPLOAD_EXPIRES_SECONDS));
  }

  async getUpload(customerId: string, id: string) {
    return this.view(await this.refresh(await this.find(customerId, id)));
  }

  async deleteUpload(customerId: string, id: string) {
    const row = await this.find(customerId, id);
    await this.store.unitOfWork({ locks: [`apps:images:${customerId}`] }, async ({ tx }) => {
      const repo = AppsRepo.over(tx);
      const using = await repo.countRevisionsOfUpload(row.id);
      if (using) throw appsErrors.imageInUse(row.id, using);
      await repo.deleteUpload(row.id);
    });
    await this.files.delete(archiveKey(row.id)).catch(() => undefined);
    return { deleted: true as const, id: row.id };
  }

  /**
   * For a deploy: the local image reference of an upload whose archive is in storage and looks like
   * one (a tar, or a gzip), so a wrong file fails the deploy call rather than the container start.
   */
  async resolve(customerId: string, id: string): Promise<{ image: string; uploadId: string }> {
    const row = await this.refresh(await this.find(customerId, id));
    if (row.status !== 'uploaded') throw appsErrors.notUploaded(row.id, this.clock.nowMs() >= row.expires_at);
    if (!isArchive(await this.head(row.id))) throw appsErrors.badArchive(row.id);
    return { image: uploadedImageRef(row.id), uploadId: row.id };
  }

  /** The archive's bytes, for the runtime to load. */
  archive(uploadId: string): () => Promise<Readable> {
    return () => this.files.get(archiveKey(uploadId));
  }

  private async find(customerId: string, id: string) {
    const row = await this.repo.upload(customerId, id.trim().toLowerCase());
    if (!row) throw appsErrors.uploadNotFound();
    return row;
  }

  /** An upload awaiting its archive becomes `uploaded` once storage holds it. */
  private async refresh(row: AppsImageUploadsTable): Promise<AppsImageUploadsTable> {
    if (row.status === 'uploaded') return row;
    const first = await this.head(row.id).catch(() => null);
    if (first === null) return row;
    const now = this.clock.nowMs();
    await this.repo.updateUpload(row.id, { status: 'uploaded', uploaded_at: now });
    return { ...row, status: 'uploaded', uploaded_at: now };
  }

  /** The first bytes of the stored archive (rejects when storage holds nothing). */
  private async head(id: string): Promise<Buffer> {
    const stream = await this.files.get(archiveKey(id));
    const chunks: Buffer[] = [];
    let n = 0;
    try {
      for await (const chunk of stream) {
        const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        chunks.push(b);
        n += b.length;
        if (n >= 512) break;
      }
    } finally {
      stream.destroy();
    }
    return Buffer.concat(chunks);
  }

  private view(row: AppsImageUploadsTable, uploadUrl?: string) {
    const now = this.clock.nowMs();
    const status =
      row.status === 'uploaded' ? 'uploaded' : now >= row.expires_at ? 'expired' : 'awaiting_upload';
    return {
      id: row.id,
      status,
      image: uploadedImageRef(row.id),
      max_bytes: Number(row.max_bytes),
      ...(uploadUrl ? { upload_url: uploadUrl, upload_method: 'PUT' as const } : {}),
      upload_expires_at: isoOf(Number(row.expires_at))!,
      uploaded_at: isoOf(row.uploaded_at === null ? null : Number(row.uploaded_at)),
      created_at: isoOf(Number(row.created_at))!,
    };
  }
}

/** A tar (POSIX `ustar` magic at 257, or an old-style header with a valid checksum) or a gzip stream. */
function isArchive(head: Buffer): boolean {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return true;
  if (head.length < 512) return false;
  if (head.subarray(257, 262).toString('latin1') === 'ustar') return true;
  const stored = Number.parseInt(head.subarray(148, 156).toString('latin1').replace(/\0.*$/, '').trim(), 8);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : head[i]!;
  return stored === sum;
}
