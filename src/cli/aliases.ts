/**
 * The CLI's words for common operations, as doctl and hcloud spell theirs: `fjord <resource>
 * <verb> [positional…] [--field value…]`. Positional arguments name path parameters or body
 * fields, in order; every other field is a `--flag`. Every operation, aliased or not, is also
 * reachable as `fjord op <operationId>`.
 */
export interface Alias {
  words: string[];
  op: string;
  args?: string[];
  /**
   * With `--wait`: the operation that reads the resource back (its path parameter filled from
   * the answer's `id`), polled until `status` is one of `until`.
   */
  wait?: { op: string; param: string; until: string[] };
}

const GPU_DONE = ['completed', 'failed', 'cancelled'];

export const ALIASES: Alias[] = [
  { words: ['account', 'profile'], op: 'getAccountProfile' },
  { words: ['key', 'list'], op: 'listApiKeys' },
  { words: ['key', 'create-pat'], op: 'createPat' },
  { words: ['key', 'create-service'], op: 'createServiceKey', args: ['service'] },
  { words: ['key', 'revoke'], op: 'revokeApiKey', args: ['key_id'] },
  { words: ['bucket', 'list'], op: 'listStorageBuckets' },
  { words: ['bucket', 'create'], op: 'createStorageBucket', args: ['bucket_name'] },
  { words: ['bucket', 'get'], op: 'getStorageBucket', args: ['bucket_name'] },
  { words: ['bucket', 'delete'], op: 'deleteStorageBucket', args: ['bucket_name'] },
  { words: ['bucket', 'key', 'list'], op: 'listStorageBucketKeys', args: ['bucket_name'] },
  { words: ['bucket', 'key', 'create'], op: 'createStorageBucketKey', args: ['bucket_name'] },
  { words: ['dns', 'zone', 'list'], op: 'listDnsZones' },
  { words: ['dns', 'zone', 'create'], op: 'createDnsZone', args: ['domain'] },
  { words: ['dns', 'zone', 'get'], op: 'getDnsZone', args: ['zone_name'] },
  { words: ['dns', 'zone', 'delete'], op: 'deleteDnsZone', args: ['zone_name'] },
  { words: ['dns', 'zone', 'export'], op: 'exportDnsZone', args: ['zone_name'] },
  { words: ['dns', 'record', 'list'], op: 'listDnsRecords', args: ['zone_name'] },
  { words: ['dns', 'record', 'create'], op: 'createDnsRecord', args: ['zone_name'] },
  { words: ['dns', 'record', 'delete'], op: 'deleteDnsRecord', args: ['zone_name', 'record_id'] },
  { words: ['db', 'list'], op: 'listDatabases' },
  { words: ['db', 'create'], op: 'createDatabase' },
  { words: ['db', 'get'], op: 'getDatabase', args: ['db_type', 'db_name'] },
  { words: ['db', 'info'], op: 'getDatabaseInfo', args: ['db_type', 'db_name'] },
  { words: ['db', 'delete'], op: 'deleteDatabase', args: ['db_type', 'db_name'] },
  { words: ['db', 'credentials'], op: 'getDatabaseCredentials', args: ['db_type', 'db_name'] },
  { words: ['db', 'rotate'], op: 'rotateDatabaseCredentials', args: ['db_type', 'db_name'] },
  { words: ['db', 'snapshot'], op: 'createDatabaseSnapshot', args: ['db_type', 'db_name'] },
  { words: ['db', 'snapshots'], op: 'listDatabaseSnapshots', args: ['db_type', 'db_name'] },
  { words: ['db', 'restore'], op: 'restoreDatabase', args: ['db_type', 'db_name'] },
  { words: ['dyn', 'hostname', 'list'], op: 'listDynHostnames' },
  { words: ['dyn', 'hostname', 'create'], op: 'createDynHostname', args: ['hostname'] },
  { words: ['dyn', 'hostname', 'delete'], op: 'deleteDynHostname', args: ['hostname_id'] },
  { words: ['sms', 'send'], op: 'sendSms' },
  { words: ['sms', 'list'], op: 'listSmsMessages' },
  { words: ['sms', 'get'], op: 'getSmsMessage', args: ['message_id'] },
  { words: ['verify', 'start'], op: 'startVerification', args: ['recipient'] },
  { words: ['verify', 'check'], op: 'checkVerification', args: ['session_id', 'code'] },
  { words: ['verify', 'status'], op: 'getVerificationStatus', args: ['session_id'] },
  { words: ['contact', 'list'], op: 'listContacts' },
  { words: ['contact', 'create'], op: 'createContact', args: ['name'] },
  { words: ['contact', 'get'], op: 'getContact', args: ['contact_id'] },
  { words: ['contact', 'delete'], op: 'deleteContact', args: ['contact_id'] },
  { words: ['gpu', 'job', 'list'], op: 'gpuListJobs' },
  {
    words: ['gpu', 'job', 'create'],
    op: 'gpuCreateJob',
    wait: { op: 'gpuGetJob', param: 'job_id', until: GPU_DONE },
  },
  { words: ['gpu', 'job', 'get'], op: 'gpuGetJob', args: ['job_id'] },
  { words: ['gpu', 'job', 'cancel'], op: 'gpuCancelJob', args: ['job_id'] },
  { words: ['vps', 'list'], op: 'vpsList' },
  {
    words: ['vps', 'create'],
    op: 'vpsCreate',
    wait: { op: 'vpsGet', param: 'vps_id', until: ['running', 'stopped', 'error'] },
  },
  { words: ['vps', 'get'], op: 'vpsGet', args: ['vps_id'] },
  { words: ['vps', 'delete'], op: 'vpsDelete', args: ['vps_id'] },
  { words: ['vps', 'start'], op: 'vpsStart', args: ['vps_id'] },
  { words: ['vps', 'stop'], op: 'vpsStop', args: ['vps_id'] },
  { words: ['k8s', 'cluster', 'list'], op: 'k8sListClusters' },
  {
    words: ['k8s', 'cluster', 'create'],
    op: 'k8sCreateCluster',
    wait: { op: 'k8sGetCluster', param: 'id', until: ['running', 'error', 'failed'] },
  },
  { words: ['k8s', 'cluster', 'get'], op: 'k8sGetCluster', args: ['id'] },
  { words: ['k8s', 'cluster', 'delete'], op: 'k8sDeleteCluster', args: ['id'] },
];

/** The alias whose words begin `words`, longest first. */
export function findAlias(words: string[]): Alias | undefined {
  return [...ALIASES]
    .sort((a, b) => b.words.length - a.words.length)
    .find((a) => a.words.every((w, i) => words[i] === w));
}

/** True when `word` starts some alias (the CLI handles the command). */
export const isAliasRoot = (word: string | undefined) => ALIASES.some((a) => a.words[0] === word);
