import type { AddressInfo } from 'node:net';
import smpp from 'smpp';

/**
 * A real SMSC for the test, built on the `smpp` package's server side: it takes Fjord's
 * transceiver bind, records every PDU, answers submit_sm with its own message ids, and sends
 * delivery receipts and mobile-originated messages back over the same bind.
 */
export class TestSmsc {
  readonly server = smpp.createServer({}, (session) => this.accept(session));
  readonly submits: smpp.PDU[] = [];
  readonly binds: smpp.PDU[] = [];
  enquireLinks = 0;
  sessions: smpp.Session[] = [];
  /** command_status to answer the next submit_sm with (then 0 again). */
  throttleNext = 0;
  /** Milliseconds to hold each submit_sm_resp, to see the window at work. */
  holdMs = 0;
  outstanding = 0;
  maxOutstanding = 0;
  private seq = 0;
  port = 0;

  private accept(session: smpp.Session) {
    this.sessions.push(session);
    session.on('close', () => {
      this.sessions = this.sessions.filter((s) => s !== session);
    });
    session.on('error', () => {});
    session.on('bind_transceiver', (pdu: smpp.PDU) => {
      this.binds.push(pdu);
      const ok = pdu.system_id === 'fjord' && pdu.password === 's3cret';
      session.send(pdu.response({ command_status: ok ? 0 : 0x0e /* ESME_RINVPASWD */ }));
    });
    session.on('enquire_link', (pdu: smpp.PDU) => {
      this.enquireLinks++;
      session.send(pdu.response());
    });
    session.on('unbind', (pdu: smpp.PDU) => session.send(pdu.response()));
    session.on('deliver_sm_resp', () => {});
    session.on('submit_sm', (pdu: smpp.PDU) => {
      if (this.throttleNext) {
        const status = this.throttleNext;
        this.throttleNext = 0;
        session.send(pdu.response({ command_status: status }));
        return;
      }
      this.submits.push(pdu);
      this.outstanding++;
      this.maxOutstanding = Math.max(this.maxOutstanding, this.outstanding);
      const id = `smsc-${++this.seq}`;
      const answer = () => {
        this.outstanding--;
        session.send(pdu.response({ message_id: id }));
      };
      if (this.holdMs > 0) setTimeout(answer, this.holdMs);
      else answer();
    });
  }

  async listen() {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Sends a deliver_sm to Fjord and waits for its deliver_sm_resp. */
  deliver(fields: Record<string, unknown>): Promise<smpp.PDU> {
    const session = this.sessions[0];
    if (!session) throw new Error('nobody is bound');
    return new Promise((resolve) => session.send(new smpp.PDU('deliver_sm', fields), resolve));
  }

  receipt(id: string, stat: 'DELIVRD' | 'UNDELIV', withTlvs: boolean) {
    const text = `id:${id} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:2611220700 done date:2611220701 stat:${stat} err:${stat === 'DELIVRD' ? '000' : '001'} text:`;
    return this.deliver({
      source_addr: '4791234567',
      destination_addr: 'Fjord',
      esm_class: 0x04,
      short_message: text,
      ...(withTlvs ? { receipted_message_id: id, message_state: stat === 'DELIVRD' ? 2 : 5 } : {}),
    });
  }

  close() {
    for (const s of this.sessions) s.destroy();
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
