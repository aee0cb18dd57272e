import type { Logger } from 'pino';
import smpp from 'smpp';
import { concatenationUdh, DATA_CODING, encodePart } from '../segmentation.js';
import {
  assertDestination,
  type DriverSink,
  type OutboundSms,
  type SmsDriver,
  SubmitError,
} from './driver.js';
import { parseDeliverSm } from './smpp-deliver.js';

export interface SmppOptions {
  /** `smpp://system_id:password@host:port` or `ssmpp://…` (TLS). */
  url: string;
  systemType: string;
  /** Most submit_sm awaiting a response at once. */
  window: number;
  enquireLinkSeconds: number;
}

const RESPONSE_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** command_status values after which the same submit_sm may succeed later. */
const TRANSIENT = new Set([
  0x08 /* RSYSERR */, 0x14 /* RMSGQFUL */, 0x58 /* RTHROTTLED */, 0x64 /* RX_T_APPN */,
]);
const THROTTLE_RETRIES = 5;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** SMPP 3.4 address fields of an E.164 number or an alphanumeric sender. */
function address(value: string): { addr: string; ton: number; npi: number } {
  if (/^\+\d+$/.test(value)) return { addr: value.slice(1), ton: 1, npi: 1 }; // international, ISDN
  if (/^\d+$/.test(value)) return { addr: value, ton: 0, npi: 1 };
  return { addr: value, ton: 5, npi: 0 }; // alphanumeric
}

/**
 * SMPP 3.4 to a real SMSC: one transceiver bind, kept alive with enquire_link and re-bound with
 * backoff after any drop; submit_sm with data_coding 0 (GSM-7, unpacked septets) or 8 (UCS-2)
 * and, for multipart messages, a concatenation UDH (esm_class UDHI); at most `window` requests
 * outstanding, backing off on ESME_RTHROTTLED. deliver_sm carries receipts (esm_class 0x04) and
 * mobile-originated messages; both are handed to the pipeline before deliver_sm_resp is sent.
 */
export class SmppDriver implements SmsDriver {
  readonly name = 'smpp';
  readonly simulated = false;
  readonly detail: string;
  private session: smpp.Session | null = null;
  private binding: Promise<smpp.Session> | null = null;
  private started = false;
  /** Set by stop(): a bind still in flight is closed as soon as it lands. */
  private stopping = false;
  private reconnectDelayMs = 1000;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private keepalive: NodeJS.Timeout | null = null;
  private inflight = 0;
  private readonly waiting: (() => void)[] = [];
  private reference = Math.floor(Math.random() * 256);
  private readonly pending = new Map<smpp.Session, Set<(err: Error) => void>>();
  private readonly mo = new Map<string, { parts: (string | undefined)[]; at: number }>();

  constructor(
    private readonly sink: DriverSink,
    private readonly log: Logger,
    private readonly opts: SmppOptions,
  ) {
    const u = new URL(opts.url);
    this.detail = `${u.protocol}//${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host} (window ${opts.window})`;
  }

  async start(): Promise<void> {
    this.started = true;
    this.stopping = false;
    this.bound().catch(() => {}); // binds in the background; failures re-bind with backoff
  }

  async stop(): Promise<void> {
    this.started = false;
    this.stopping = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const s = this.session;
    this.session = null;
    this.binding = null;
    this.stopKeepalive();
    if (!s) return;
    await new Promise<void>((resolve) => {
      const done = setTimeout(() => {
        s.destroy();
        resolve();
      }, 1000).unref();
      const ok = s.send(new smpp.PDU('unbind'), () => {
        clearTimeout(done);
        s.close(() => resolve());
      });
      if (!ok) {
        clearTimeout(done);
        s.destroy();
        resolve();
      }
    });
  }

  async ready(): Promise<void> {
    await this.link();
  }

  private link(): Promise<smpp.Session> {
    return this.bound().catch((err: Error) => {
      throw new SubmitError(`SMSC not reachable: ${err.message}`, false);
    });
  }

  async submit(sms: OutboundSms): Promise<string[]> {
    assertDestination(sms.to);
    const session = await this.link();
    const src = address(sms.from);
    const dst = address(sms.to);
    const total = sms.parts.length;
    this.reference = (this.reference + 1) & 0xff;
    const ref = this.reference;
    return Promise.all(
      sms.parts.map((text, i) => {
        const payload = encodePart(text, sms.encoding);
        const udh = total > 1 ? concatenationUdh(ref, total, i + 1) : null;
        return this.submitPart(session, {
          source_addr: src.addr,
          source_addr_ton: src.ton,
          source_addr_npi: src.npi,
          destination_addr: dst.addr,
          dest_addr_ton: dst.ton,
          dest_addr_npi: dst.npi,
          esm_class: udh ? 0x40 : 0x00,
          data_coding: DATA_CODING[sms.encoding],
          registered_delivery: 0x01,
          short_message: udh ? Buffer.concat([udh, payload]) : payload,
        });
      }),
    );
  }

  private async submitPart(session: smpp.Session, fields: Record<string, unknown>): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      const resp = await this.request(session, new smpp.PDU('submit_sm', { ...fields }));
      if (resp.command_status === 0) return String(resp.message_id);
      const status = `0x${resp.command_status.toString(16).padStart(8, '0')}`;
      if (resp.command_status === 0x58 && attempt < THROTTLE_RETRIES) {
        await sleep(200 * 2 ** attempt); // the SMSC asked us to slow down
        continue;
      }
      throw new SubmitError(
        `SMSC refused submit_sm: command_status ${status}`,
        !TRANSIENT.has(resp.command_status),
      );
    }
  }

  /** One request through the window, with a response timeout. */
  private async request(session: smpp.Session, pdu: smpp.PDU): Promise<smpp.PDU> {
    while (this.inflight >= this.opts.window) await new Promise<void>((r) => this.waiting.push(r));
    this.inflight++;
    try {
      return await new Promise<smpp.PDU>((resolve, reject) => {
        const fail = (err: Error) => {
          clearTimeout(timer);
          reject(new SubmitError(err.message, false));
        };
        const timer = setTimeout(() => {
          this.pending.get(session)?.delete(fail);
          reject(new SubmitError(`no ${pdu.command}_resp within ${RESPONSE_TIMEOUT_MS / 1000}s`, false));
        }, RESPONSE_TIMEOUT_MS);
        timer.unref();
        const set = this.pending.get(session) ?? new Set();
        this.pending.set(session, set);
        set.add(fail);
        const sent = session.send(pdu, (resp) => {
          clearTimeout(timer);
          set.delete(fail);
          resolve(resp);
        });
        if (!sent) fail(new Error('the SMPP link is down'));
      });
    } finally {
      this.inflight--;
      this.waiting.shift()?.();
    }
  }

  /** The bound session, binding first when there is none. */
  private bound(): Promise<smpp.Session> {
    if (this.session) return Promise.resolve(this.session);
    if (this.binding !== null) return this.binding;
    this.binding = this.bind().then(
      (s) => {
        this.binding = null;
        if (this.stopping) {
          s.destroy();
          throw new Error('the SMPP driver is stopped');
        }
        this.session = s;
        this.reconnectDelayMs = 1000;
        this.startKeepalive(s);
        this.log.info({ smsc: this.detail }, 'SMPP transceiver bound');
        return s;
      },
      (err: Error) => {
        this.binding = null;
        this.log.warn({ err: err.message }, 'SMPP bind failed');
        this.scheduleReconnect();
        throw err;
      },
    );
    return this.binding;
  }

  private bind(): Promise<smpp.Session> {
    const u = new URL(this.opts.url);
    return new Promise((resolve, reject) => {
      const session = smpp.connect({ url: this.opts.url, auto_enquire_link_period: 0 });
      let settled = false;
      const settle = (err: Error | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) {
          session.destroy();
          reject(err);
        } else resolve(session);
      };
      const timer = setTimeout(() => settle(new Error('timed out binding to the SMSC')), CONNECT_TIMEOUT_MS);
      timer.unref();
      session.on('error', (err: Error) => settle(err));
      session.on('close', () => {
        settle(new Error('the SMSC closed the connection'));
        this.dropped(session);
      });
      session.on('enquire_link', (pdu: smpp.PDU) => session.send(pdu.response()));
      session.on('unbind', (pdu: smpp.PDU) => {
        session.send(pdu.response());
        session.close();
      });
      session.on('deliver_sm', (pdu: smpp.PDU) => void this.onDeliver(session, pdu));
      session.on(u.protocol === 'ssmpp:' ? 'secureConnect' : 'connect', () => {
        session.send(
          new smpp.PDU('bind_transceiver', {
            system_id: decodeURIComponent(u.username),
            password: decodeURIComponent(u.password),
            system_type: this.opts.systemType,
            interface_version: 0x34,
          }),
          (resp: smpp.PDU) =>
            settle(
              resp.command_status === 0
                ? null
                : new Error(`bind_transceiver refused: command_status 0x${resp.command_status.toString(16)}`),
            ),
        );
      });
    });
  }

  private dropped(session: smpp.Session): void {
    for (const fail of this.pending.get(session) ?? []) fail(new Error('the SMPP link dropped'));
    this.pending.delete(session);
    if (this.session !== session) return;
    this.session = null;
    this.stopKeepalive();
    this.log.warn('SMPP link dropped; re-binding');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (!this.started || this.reconnectTimer) return;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(30_000, delay * 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.started && !this.session) this.bound().catch(() => {});
    }, delay);
    this.reconnectTimer.unref();
  }

  /** enquire_link every N seconds; no answer within N seconds drops the link (and re-binds). */
  private startKeepalive(session: smpp.Session): void {
    this.stopKeepalive();
    const every = this.opts.enquireLinkSeconds * 1000;
    this.keepalive = setInterval(() => {
      const timer = setTimeout(() => session.destroy(), every);
      timer.unref();
      if (!session.send(new smpp.PDU('enquire_link'), () => clearTimeout(timer))) session.destroy();
    }, every);
    this.keepalive.unref();
  }

  private stopKeepalive(): void {
    if (this.keepalive) clearInterval(this.keepalive);
    this.keepalive = null;
  }

  /** Receipts and MO messages: stored durably by the pipeline, then acknowledged. */
  private async onDeliver(session: smpp.Session, pdu: smpp.PDU): Promise<void> {
    try {
      const parsed = parseDeliverSm(pdu);
      if (parsed.kind === 'receipt') {
        if (parsed.final) await this.sink.receipt(parsed.receipt);
      } else {
        const whole = this.assemble(parsed);
        if (whole !== null) await this.sink.inbound({ from: parsed.from, to: parsed.to, text: whole });
      }
      session.send(pdu.response());
    } catch (err) {
      // Not acknowledged as taken: the SMSC will deliver it again.
      this.log.error({ err }, 'could not take a deliver_sm');
      session.send(pdu.response({ command_status: 0x08 }));
    }
  }

  /** Joins a concatenated MO message; parts wait in memory for at most ten minutes. */
  private assemble(m: {
    from: string;
    concat: { ref: number; total: number; seq: number } | null;
    text: string;
  }) {
    if (!m.concat) return m.text;
    const key = `${m.from}:${m.concat.ref}`;
    const now = Date.now();
    for (const [k, v] of this.mo) if (now - v.at > 600_000) this.mo.delete(k);
    const entry = this.mo.get(key) ?? { parts: new Array(m.concat.total).fill(undefined), at: now };
    entry.parts[m.concat.seq - 1] = m.text;
    this.mo.set(key, entry);
    if (entry.parts.some((p) => p === undefined)) return null;
    this.mo.delete(key);
    return entry.parts.join('');
  }
}
