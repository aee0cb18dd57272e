/**
 * How a server's state moves in time: a move (provision, start, stop, reboot) is stored with the
 * time it is bound to take on the kernel clock and is finished once that time is up, or earlier
 * when a real driver says its work is done. Apart from the service because the backup code reads
 * servers the same way, and it is the one part with timing rules of its own.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Store } from '../../kernel/store/store.js';
import type { VpsServersTable } from './migrations.js';
import { VpsRepo } from './repo.js';

/**
 * The server's state as of `now`: a move that started (provision, start, stop, reboot) is
 * finished once its time on the kernel clock is up. Reads use it without writing; every write
 * stores it first, inside the unit of work that holds the server's lock.
 */
export function settle(row: VpsServersTable, now: number): VpsServersTable {
  if (row.settles_at === null || row.next_status === null || now < row.settles_at) return row;
  const status = row.next_status;
  return {
    ...row,
    status,
    next_status: null,
    settles_at: null,
    action: null,
    running_since: status === 'running' ? row.settles_at : null,
  };
}

/** The promise with a rejection handler attached, so a failed unit of work leaves none unhandled. */
export function quiet(ready: Promise<void> | undefined): Promise<void> | undefined {
  ready?.catch(() => {});
  return ready;
}

/**
 * A real driver's work is done (the server answers, or is down): the move ends now rather
 * than at its bound. When the work failed (the server did not come up), the server is
 * `stopped`, which is what it is; starting it again retries. Runs after the move's unit of
 * work committed, under the server's lock, and only if the server is still in that move.
 */
export function settleWhenReady(
  store: Store,
  clock: Clock,
  log: Logger,
  id: string,
  action: string,
  ready: Promise<void> | undefined,
) {
  if (!ready) return;
  const settle = (failed: boolean) =>
    store.unitOfWork({ locks: [`vps:server:${id}`] }, async ({ tx }) => {
      const repo = VpsRepo.over(tx);
      const row = await repo.byId(id);
      const now = clock.nowMs();
      if (!row || row.action !== action || row.settles_at === null) return;
      if (failed)
        await repo.updateServer(id, {
          status: 'stopped',
          next_status: null,
          settles_at: null,
          action: null,
          running_since: null,
        });
      else if (row.settles_at > now) await repo.updateServer(id, { settles_at: now });
    });
  ready
    .then(
      () => settle(false),
      async (err) => {
        log.error({ err, vps: id, action }, 'the server did not come up; it is stopped');
        await settle(true);
      },
    )
    .catch((err) => log.warn({ err, vps: id, action }, 'recording the end of a server move failed'));
}
