import { CliError } from '../context.js';
import type { Action } from './action.js';
import { runAttached } from './spawn-client.js';

/**
 * `fjord db connect <db_type> <db_name>`: psql or mariadb, logged in. Fjord keeps only a hash of
 * a database's password, so the credentials endpoint cannot hand it back; the password comes from
 * (in order) `--rotate` (a new password, made now and used at once: the old one stops working),
 * the client's own variable (PGPASSWORD for PostgreSQL, MYSQL_PWD for MariaDB), or the client's
 * prompt on a terminal. With none of those and no terminal to prompt on, it says so instead of
 * starting a client that can only fail.
 */
export const dbConnect: Action = {
  words: ['db', 'connect'],
  args: ['db_type', 'db_name'],
  op: 'getDatabaseCredentials',
  switches: ['rotate'],
  help: `Opens psql (PostgreSQL) or mariadb (MariaDB) on the database, logged in. The password is
  --rotate          a new one, made now (the previous password stops working: update your apps)
  PGPASSWORD or MYSQL_PWD in the environment (the password create or rotate printed)
  otherwise psql and mariadb prompt for it on a terminal.
Words after -- go to the client: fjord db connect postgresql shop -- -c 'SELECT 1'`,
  async run(a, [dbType, dbName, ...rest]) {
    if (!dbType || !dbName || rest.length)
      throw new CliError('usage: fjord db connect <db_type> <db_name> [--rotate] [-- client args]', 2);
    if (dbType !== 'postgresql' && dbType !== 'mariadb')
      throw new CliError(`db connect works with postgresql and mariadb databases, not ${dbType}`, 2);
    const variable = dbType === 'postgresql' ? 'PGPASSWORD' : 'MYSQL_PWD';
    let password = process.env[variable] || null;
    let creds: { host: string; port: number; username: string; database?: string; db_name?: string };
    if (a.switches.has('rotate')) {
      const rotated = (await a.call('rotateDatabaseCredentials', {
        positional: [dbType, dbName],
      })) as typeof creds & {
        password: string;
      };
      a.err(`fjord: rotated the password of ${dbName}: the previous one no longer works\n`);
      password = rotated.password;
      creds = rotated;
    } else {
      creds = (await a.call('getDatabaseCredentials', { positional: [dbType, dbName] })) as typeof creds;
      if (!password && !process.stdin.isTTY)
        throw new CliError(
          `no password for ${dbName}: Fjord shows it only when it is made. Give --rotate (a new one), set ${variable}, or run this on a terminal to be asked`,
          2,
        );
    }
    const database = creds.database ?? creds.db_name ?? dbName;
    if (dbType === 'postgresql') {
      return await runAttached(
        'psql',
        ['-h', creds.host, '-p', String(creds.port), '-U', creds.username, '-d', database, ...a.passthrough],
        password ? { PGPASSWORD: password } : {},
      );
    }
    return await runAttached(
      'mariadb',
      [
        '-h',
        creds.host,
        '-P',
        String(creds.port),
        '-u',
        creds.username,
        '--protocol=tcp',
        ...(password ? [] : ['-p']),
        database,
        ...a.passthrough,
      ],
      password ? { MYSQL_PWD: password } : {},
    );
  },
};
