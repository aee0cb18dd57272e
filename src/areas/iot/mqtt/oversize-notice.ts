/** The part of aedes's client that rejecting an oversized packet reads. */
interface OversizeClient {
  version?: number;
  connackSent?: boolean;
  connected: boolean;
  closed: boolean;
  errored?: boolean;
  rejectPacketTooLarge(size: number, done?: () => void): void;
}

/**
 * Tells an MQTT 5 client that its packet was too large (DISCONNECT 0x95) from the moment its
 * CONNACK is out. aedes sends that DISCONNECT only to a client it counts as connected, which it
 * does once the session's queued messages are sent (a store read, slow on a busy server), and it
 * reads the client's packets before then: a client that published at once after its CONNACK, as
 * it may, was dropped without a word.
 */
export function noticeOversizeAfterConnack(client: object): void {
  const c = client as OversizeClient;
  const reject = c.rejectPacketTooLarge;
  c.rejectPacketTooLarge = function (this: OversizeClient, size: number, done?: () => void) {
    // What aedes checks before it may send a DISCONNECT; closing the client clears it again.
    if (this.version === 5 && this.connackSent && !this.connected && !this.closed && !this.errored)
      this.connected = true;
    reject.call(this, size, done);
  };
}
