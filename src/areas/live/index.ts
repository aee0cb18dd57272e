import { join } from 'node:path';
import { defineArea } from '../wiring.js';
import { LiveAccess } from './access.js';
import { RtmpIngest } from './ingest.js';
import { FINALISE_ATTEMPTS, LiveMedia } from './media.js';
import { liveMigrations } from './migrations.js';
import { RECONNECT_JOB } from './reconnect.js';
import { liveRoutes } from './routes.js';
import { hlsRoutes } from './routes-hls.js';
import { mediaRoutes } from './routes-media.js';
import { pageRoutes } from './routes-pages.js';
import { replayRoutes } from './routes-replay.js';
import { FINALISE_JOB, LiveService, SCHEDULED_START_JOB } from './service.js';

export { LiveService } from './service.js';

const PURGE_JOB = 'live.events.purge';

/** Live events: the management API and its lifecycle. Its service is `services.live`. */
export const liveArea = defineArea({
  name: 'live',
  // Recordings are MP4s in an internal bucket of the object storage.
  needs: ['storage'],
  migrations: liveMigrations,
  async setup(kernel, { storage }) {
    // Made below; the ingest URL asks it for its port, which is the bound one once it listens
    // (FJORD_RTMP_PORT=0) and the configured one in a process without the rtmp role.
    let ingest: RtmpIngest | undefined;
    const addresses = {
      // FJORD_RTMP_PUBLIC_URL behind a load balancer, else the API's host name on the RTMP port.
      ingestUrl: () =>
        kernel.config.rtmpPublicUrl ??
        `rtmp://${new URL(kernel.baseUrl()).hostname}:${ingest?.port() ?? kernel.config.ports.rtmp}/live`,
      liveUrl: () => `${kernel.baseUrl()}/live`,
    };
    const sessionsDir = join(kernel.config.dataDir, 'live', 'sessions');
    const live = new LiveService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      kernel.audit,
      addresses,
      kernel.jobs,
      sessionsDir,
    );
    const recordings = storage.internalBucket('live-recordings');
    const media = new LiveMedia(
      kernel.store,
      kernel.clock,
      live,
      sessionsDir,
      recordings,
      kernel.log.child({ area: 'live' }),
      (eventId, recordingId) =>
        `${kernel.baseUrl()}/v1/live-events/events/${eventId}/recordings/${recordingId}/download`,
    );
    const viewers = new LiveAccess(
      kernel.store,
      kernel.clock,
      kernel.limits,
      kernel.audit,
      live,
      kernel.log,
      kernel.auth,
    );
    // Expired recordings, and events soft-deleted 30 days ago, are purged every hour, on the clock.
    kernel.jobs.register(PURGE_JOB, { run: () => media.purge() });
    kernel.jobs.register<{ event_id: string }>(FINALISE_JOB, {
      run: async (p, ctx) => {
        try {
          await media.finalise(p.event_id, ctx);
        } catch (err) {
          // The last attempt failed too: the event is `failed` rather than stuck in `processing`.
          if (ctx.attempt >= FINALISE_ATTEMPTS) await media.finaliseAbandoned(p.event_id);
          throw err;
        }
      },
      maxAttempts: FINALISE_ATTEMPTS,
      backoffSeconds: () => 2,
      abandoned: (p) => media.finaliseAbandoned(p.event_id),
    });
    kernel.jobs.register<{ event_id: string }>(SCHEDULED_START_JOB, {
      run: (p) => live.scheduledStart(p.event_id),
    });
    kernel.jobs.register<{ event_id: string }>(RECONNECT_JOB, {
      run: (p) => live.reconnect.windowPassed(p.event_id),
    });
    await kernel.jobs.schedule(PURGE_JOB, PURGE_JOB, 3600);
    kernel.registry.addCredentialKind({
      name: 'stream-key',
      area: 'live',
      doc: 'The RTMP publish name of an event (its stream key)',
    });
    kernel.registry.addServiceProvider(async (customerId) => {
      // The service is active from the customer's first event on.
      const first = await live.repo.firstCreated(customerId);
      if (!first) return [];
      return [
        {
          id: `live-events:${customerId}`,
          service_type: 'live-events',
          name: 'Live events',
          status: 'active',
          region: null,
          created_at: new Date(first).toISOString(),
          metadata: {},
          api: {
            kind: 'rest',
            openapi: `${kernel.baseUrl()}/openapi.json`,
            docs: `${kernel.baseUrl()}/docs`,
            base_url: `${kernel.baseUrl()}/v1/live-events`,
          },
        },
      ];
    });
    ingest = new RtmpIngest(live, kernel.log.child({ role: 'rtmp' }), {
      host: kernel.config.host,
      port: kernel.config.ports.rtmp,
      sessionsDir,
    });
    kernel.registry.addBackend({
      area: 'live',
      name: 'ingest',
      driver: 'rtmp relayed to ffmpeg (HLS, -c copy)',
      simulated: false,
      detail: `sessions in ${sessionsDir}; recordings as MP4 in the ${recordings.location}`,
    });
    return {
      service: live,
      routes: [
        ...liveRoutes(live),
        ...mediaRoutes(media, viewers),
        ...hlsRoutes(live, viewers, media, sessionsDir),
        ...replayRoutes(live, viewers, media, sessionsDir),
        ...pageRoutes(live, () => kernel.baseUrl()),
      ],
      servers: [ingest],
      onReset: async () => {
        await kernel.jobs.schedule(PURGE_JOB, PURGE_JOB, 3600);
      },
    };
  },
});
