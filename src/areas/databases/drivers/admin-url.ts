/** The parts of an admin URL the drivers and the dump tools need. */
export interface AdminTarget {
  user: string;
  password: string | null;
  /** Where customers connect (the URL's host and port). */
  host: string;
  port: number;
  /** Unix socket directory (PostgreSQL `host=`) or socket file (MariaDB `socket=`) the admin uses. */
  socket: string | null;
  database: string | null;
}

export function parseAdminUrl(raw: string, defaultPort: number): AdminTarget {
  const url = new URL(raw);
  const socket = url.searchParams.get('host') ?? url.searchParams.get('socket');
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || null;
  return {
    user: decodeURIComponent(url.username) || 'root',
    password: url.password ? decodeURIComponent(url.password) : null,
    host: url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: url.port ? Number(url.port) : defaultPort,
    socket: socket && socket.startsWith('/') ? socket : null,
    database,
  };
}
