// The `smpp` package (0.5) ships no types; this covers what Fjord and its tests use.
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  namespace smpp {
    interface PDU {
      command: string;
      command_id: number;
      command_status: number;
      sequence_number: number;
      // biome-ignore lint/suspicious/noExplicitAny: PDU fields vary by command
      [field: string]: any;
      isResponse(): boolean;
      response(options?: Record<string, unknown>): PDU;
    }

    interface Session extends EventEmitter {
      socket: Socket;
      send(pdu: PDU, responseCallback?: (pdu: PDU) => void, sendCallback?: (pdu: PDU) => void): boolean;
      close(callback?: () => void): void;
      destroy(callback?: () => void): void;
      // biome-ignore lint/suspicious/noExplicitAny: one shortcut per SMPP command
      [command: string]: any;
    }

    interface Server extends NetServer {
      sessions: Session[];
    }

    function connect(options: Record<string, unknown> | string, listener?: () => void): Session;
    function createServer(options: Record<string, unknown>, listener?: (session: Session) => void): Server;
    const PDU: new (command: string, options?: Record<string, unknown>) => PDU;
  }
  export = smpp;
}
