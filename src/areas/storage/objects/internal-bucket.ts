import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { InternalObjects } from '../data-plane-contract.js';
import { presignInternalPut, type UploadSigner } from '../s3/internal-upload.js';
import { INTERNAL_OWNER } from './internal-owner.js';
import type { ObjectStore } from './object-store.js';
import type { BucketRef } from './repo.js';

/**
 * A bucket Fjord keeps for itself (database snapshots): real objects of the data plane — the
 * same blob store (files in the data dir, or the upstream S3 store), the same metadata rows and
 * usage counters, the same atomic commit — but with no row in `storage_buckets`, so neither the
 * API nor the S3 listener can name it, and no customer's bucket name can collide with it.
 */
export class InternalBucket implements InternalObjects {
  private readonly ref: BucketRef;

  constructor(
    private readonly objects: ObjectStore,
    readonly purpose: string,
    private readonly signer?: UploadSigner,
  ) {
    if (!/^[a-z0-9-]+$/.test(purpose)) throw new Error(`bad internal bucket name ${purpose}`);
    this.ref = { id: `${INTERNAL_OWNER}:${purpose}`, customerId: INTERNAL_OWNER, versioning: 'Unversioned' };
  }

  get location(): string {
    return `internal bucket ${this.purpose} on the ${this.objects.blobs.name} object store`;
  }

  async put(key: string, body: Readable, contentType: string) {
    const md5 = createHash('md5');
    let size = 0;
    const chunks = async function* () {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        md5.update(chunk);
        size += chunk.length;
        yield chunk;
      }
    };
    const { result } = await this.objects.putObject(
      this.ref,
      key,
      {
        chunks,
        // Nothing to compare against: the producer (a dump) has no length or digest up front.
        verify: () => ({ size, md5: md5.digest('hex'), checksum: null }),
        expectedSize: -1,
      },
      { contentType, headers: {}, metadata: {}, tags: {} },
    );
    return { size: result.size, etag: result.md5 };
  }

  presignPut(key: string, maxBytes: number, expiresSeconds: number): string {
    if (!this.signer) throw new Error('this data plane cannot presign internal uploads');
    return presignInternalPut(this.signer, this.purpose, key, maxBytes, expiresSeconds);
  }

  async get(key: string): Promise<Readable> {
    const row = await this.objects.repo.latest(this.ref.id, key);
    if (!row || row.is_delete_marker) throw new Error(`object ${key} is not in the ${this.purpose} bucket`);
    return this.objects.read(row, 0, Number(row.size) - 1);
  }

  async delete(key: string): Promise<void> {
    await this.objects.deleteCurrent(this.ref, key);
  }

  usage() {
    return this.objects.repo.usage(this.ref.id);
  }
}
