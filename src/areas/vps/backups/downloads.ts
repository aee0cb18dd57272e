/**
 * Download links of backups: a sealed token that names the backup, its customer and an expiry on
 * Fjord's clock, so the archive can be fetched without credentials until then. Apart from the
 * backup service because it is the one way into backups that is not the customer's API key.
 */
import type { Readable } from 'node:stream';
import { type Clock, isoOf } from '../../../kernel/clock.js';
import type { SecretBox } from '../../../kernel/secrets.js';
import type { Store } from '../../../kernel/store/store.js';
import type { InternalObjects } from '../../storage/service.js';
import { vpsErrors } from '../errors.js';
import { VpsRepo } from '../repo.js';
import { BackupRepo } from './repo.js';

/** Download links are valid this long, on Fjord's clock. */
export const DOWNLOAD_LINK_SECONDS = 3600;

interface DownloadLink {
  k: 'vps-backup';
  b: string;
  c: string;
  e: number;
}

export class BackupDownloads {
  private readonly repo: BackupRepo;
  private readonly servers: VpsRepo;

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly files: InternalObjects,
    private readonly secrets: SecretBox,
    private readonly baseUrl: () => string,
  ) {
    this.repo = BackupRepo.of(store);
    this.servers = VpsRepo.of(store);
  }

  /** A signed link to an available backup of the customer's server. */
  async link(customerId: string, id: string, backupId: string) {
    const server = await this.servers.server(customerId, id);
    if (!server) throw vpsErrors.notFound();
    const b = await this.repo.backup(id, backupId);
    if (!b) throw vpsErrors.backupNotFound();
    if (b.status !== 'available') throw vpsErrors.backupNotAvailable(b.status);
    const expires = this.clock.nowMs() + DOWNLOAD_LINK_SECONDS * 1000;
    const link: DownloadLink = { k: 'vps-backup', b: b.id, c: customerId, e: expires };
    const token = Buffer.from(this.secrets.seal(JSON.stringify(link))).toString('base64url');
    return {
      backup_id: b.id,
      vps_id: id,
      download_url: `${this.baseUrl()}/v1/vps/backup-downloads/${b.id}?token=${token}`,
      expires_at: isoOf(expires)!,
      filename: fileName(server.hostname, b.id),
      format: 'tar.gz' as const,
      size_bytes: Number(b.size_bytes),
      sha256: b.sha256!,
    };
  }

  /** The archive behind a download link, when the link is this backup's and unexpired. */
  async open(backupId: string, token: string) {
    let link: DownloadLink;
    try {
      link = JSON.parse(this.secrets.open(Buffer.from(token, 'base64url').toString('utf8'))) as DownloadLink;
    } catch {
      throw vpsErrors.badDownloadLink();
    }
    if (link.k !== 'vps-backup' || link.b !== backupId || link.e < this.clock.nowMs())
      throw vpsErrors.badDownloadLink();
    const b = await this.repo.byId(backupId);
    if (!b || b.customer_id !== link.c || b.status !== 'available') throw vpsErrors.badDownloadLink();
    const server = await this.servers.server(b.customer_id, b.server_id);
    if (!server) throw vpsErrors.badDownloadLink();
    const body: Readable = await this.files.get(b.storage_key).catch((err) => {
      throw vpsErrors.backupUnreadable(err);
    });
    return { filename: fileName(server.hostname, b.id), size: Number(b.size_bytes), body };
  }
}

const fileName = (hostname: string, backupId: string) => `${hostname}-${backupId}.tar.gz`;
