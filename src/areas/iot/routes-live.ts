/**
 * A device's telemetry as it arrives, as Server-Sent Events: what the console's live charts draw
 * from, and what `curl -N` shows. Points are pushed from the telemetry stream the moment the
 * broker has stored them, so a page never polls for them.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { clientGone } from '../../kernel/http/client-gone.js';
import { openEventStream } from '../../kernel/http/event-stream.js';
import { defineRoute } from '../../kernel/http/route.js';
import { iotAccess } from './catalogue/routes.js';
import { DeviceParams } from './schemas.js';
import type { IotService } from './service.js';
import type { IotEvent } from './telemetry-stream.js';

/** A comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/** Bytes written and not yet taken by a client past which its stream ends: a stalled reader costs no memory. */
const MAX_UNSENT = 1024 * 1024;

export function iotLiveRoutes(iot: IotService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/iot/devices/:device_id/telemetry/stream',
      operationId: 'iotDeviceTelemetryStream',
      tag: 'IoT',
      summary: 'The device’s telemetry as it arrives, as Server-Sent Events',
      description:
        'A `text/event-stream` answer. Each accepted point is a `telemetry` event, `data: {"key", "value", "ts"}` (`ts` in epoch milliseconds); the device connecting or leaving is a `state` event, `data: {"is_online", "at"}`. Deleting the device ends the stream with an `end` event. Points are pushed by the process whose broker received them: run the `api` and `mqtt` roles in one process (as `fjord start` does) for the stream to carry them. Errors (404) come before the stream, as JSON.',
      access: iotAccess('iot:read'),
      rateLimit: ['iot'],
      idempotency: false,
      params: DeviceParams,
      response: { 200: Type.String({ description: 'text/event-stream' }) },
      produces: 'text/event-stream',
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        await iot.get(principal.customerId, params.device_id); // 404 before the stream opens
        return follow(iot, principal.customerId, params.device_id, reply);
      },
    }),
  ];
}

function follow(iot: IotService, customerId: string, deviceId: string, reply: FastifyReply) {
  const gone = clientGone(reply);
  const res = openEventStream(reply);
  res.flushHeaders();
  res.write(': connected\n\n');
  return new Promise<FastifyReply>((resolve) => {
    const send = (event: string, data: unknown) => {
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      if (res.writableLength > MAX_UNSENT) finish();
    };
    const unsubscribe = iot.stream.subscribe(
      (e: IotEvent) => {
        if (e.customer_id !== customerId || e.device_id !== deviceId) return;
        if (e.kind === 'telemetry') send('telemetry', { key: e.key, value: e.value, ts: e.ts });
        else if (e.kind === 'connected' || e.kind === 'disconnected')
          send('state', { is_online: e.kind === 'connected', at: e.at });
        else if (e.kind === 'deleted') {
          send('end', { reason: 'deleted' });
          finish();
        }
      },
      { points: true },
    );
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    let done = false;
    function finish() {
      if (done) return;
      done = true;
      unsubscribe();
      clearInterval(heartbeat);
      res.end();
      resolve(reply);
    }
    gone.addEventListener('abort', finish, { once: true });
    res.once('close', finish);
  });
}
