import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on a free loopback port that keeps every message it accepts. */
export async function startSmtpSink() {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    /** The newest message to `to`. */
    lastTo(to: string) {
      return [...received].reverse().find((m) => m.to.includes(to));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The text/plain part of a message, decoded from quoted-printable as a mail client would. */
export function plainTextOf(raw: string): string {
  const part = /Content-Type: text\/plain[\s\S]*?\r?\n\r?\n([\s\S]*?)(?:\r?\n--|$)/i.exec(raw);
  const body = part ? part[1]! : raw;
  if (!/Content-Transfer-Encoding: quoted-printable/i.test(raw)) return body;
  const bytes: number[] = [];
  const flat = body.replace(/=\r?\n/g, '');
  for (let i = 0; i < flat.length; i++) {
    const hex = flat[i] === '=' ? /^[0-9A-F]{2}/i.exec(flat.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(Number.parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(...Buffer.from(flat[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The code in a verification text (or message), as a person would read it. */
export function codeIn(message: string): string {
  const text = /^Content-Type:/im.test(message) ? plainTextOf(message) : message;
  const m = /(?:code is|kode er|kod är|koodisi on) (\d{4,8})/i.exec(text);
  if (!m) throw new Error(`no code in: ${text.slice(0, 500)}`);
  return m[1]!;
}
