export type DbType = 'postgresql' | 'mariadb';

/** A database as the API addresses it: the path parameters of every database route. */
export type Db = { db_type: DbType; db_name: string };
export const at = (db: Db) => ({ params: { path: db } });
