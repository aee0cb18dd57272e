/**
 * The CLI's named commands, as doctl and hcloud spell theirs: `fjord <resource> <verb>
 * [positional…] [--field value…]`, one line per command over an OpenAPI operationId. Positional
 * arguments (`<name>` in the spec) fill path parameters or body fields, in order; every other
 * field is a `--flag`, and `--help` on a command lists them from the operation's schema. Every
 * operation, named or not, is also reachable as `fjord op <operationId>`. Commands that do more
 * than one call (speech transcribe, db connect, apps logs --follow …) are in actions/.
 */
export interface Alias {
  words: string[];
  op: string;
  args?: string[];
  /**
   * With `--wait`: the operation that reads the resource back (its path parameter `param`
   * filled from the answer's `from` field, `id` by default), polled until `status` is one of
   * `until`.
   */
  wait?: Wait;
}

export interface Wait {
  op: string;
  param: string;
  from?: string;
  /** More path parameters copied from the answer, as [param, field]. */
  also?: [string, string][];
  until: string[];
  /** A field shown beside the status while waiting (a cluster's provisioning step). */
  detail?: string;
}

/** `'dns record delete <zone_name> <record_id>'` → words and positional names. */
function cmd(spec: string, op: string, wait?: Wait): Alias {
  const parts = spec.split(' ');
  const args = parts.filter((p) => p.startsWith('<')).map((p) => p.slice(1, -1));
  return {
    words: parts.filter((p) => !p.startsWith('<')),
    op,
    ...(args.length ? { args } : {}),
    ...(wait ? { wait } : {}),
  };
}

const GPU_DONE = ['completed', 'failed', 'cancelled'];
const VPS_WAIT: Wait = { op: 'vpsGet', param: 'vps_id', until: ['running', 'stopped'] };
const CLUSTER_WAIT: Wait = {
  op: 'k8sGetCluster',
  param: 'id',
  until: ['running', 'error'],
  detail: 'provisioning_step',
};
const APP_WAIT: Wait = {
  op: 'appsGet',
  param: 'app_id',
  until: ['running', 'scaled_to_zero', 'failed', 'suspended'],
};
const REVISION_WAIT: Wait = {
  op: 'appsRevision',
  param: 'revision_id',
  also: [['app_id', 'app_id']],
  until: ['ready', 'failed'],
};

export const ALIASES: Alias[] = [
  // Account
  cmd('account profile', 'getAccountProfile'),
  cmd('account services', 'listAccountServices'),
  cmd('key list', 'listApiKeys'),
  cmd('key create-pat', 'createPat'),
  cmd('key create-service <service>', 'createServiceKey'),
  cmd('key revoke <key_id>', 'revokeApiKey'),
  cmd('ssh-key list', 'listSshKeys'),
  cmd('ssh-key add', 'addSshKey'),
  cmd('ssh-key delete <key_id>', 'deleteSshKey'),
  cmd('region list', 'listRegions'),
  cmd('region get <region_code>', 'getRegion'),
  cmd('webhook secret', 'getWebhookSecret'),
  cmd('webhook rotate-secret', 'rotateWebhookSecret'),
  cmd('webhook deliveries', 'listWebhookDeliveries'),
  // Object storage
  cmd('bucket list', 'listStorageBuckets'),
  cmd('bucket create <bucket_name>', 'createStorageBucket'),
  cmd('bucket get <bucket_name>', 'getStorageBucket'),
  cmd('bucket delete <bucket_name>', 'deleteStorageBucket'),
  cmd('bucket visibility <bucket_name>', 'setStorageBucketVisibility'),
  cmd('bucket key list <bucket_name>', 'listStorageBucketKeys'),
  cmd('bucket key create <bucket_name>', 'createStorageBucketKey'),
  cmd('bucket key delete <bucket_name> <key_id>', 'deleteStorageBucketKey'),
  cmd('storage key list', 'listStorageAccountKeys'),
  cmd('storage key create', 'createStorageAccountKey'),
  cmd('storage key get <key_id>', 'getStorageAccountKey'),
  cmd('storage key delete <key_id>', 'deleteStorageAccountKey'),
  cmd('storage credentials', 'getStorageCredentials'),
  // DNS
  cmd('dns zone list', 'listDnsZones'),
  cmd('dns zone create <domain>', 'createDnsZone'),
  cmd('dns zone get <zone_name>', 'getDnsZone'),
  cmd('dns zone delete <zone_name>', 'deleteDnsZone'),
  cmd('dns zone export <zone_name>', 'exportDnsZone'),
  cmd('dns zone import <zone_name>', 'importDnsZone'),
  cmd('dns zone dnssec <zone_name>', 'activateDnssec'),
  cmd('dns record list <zone_name>', 'listDnsRecords'),
  cmd('dns record create <zone_name>', 'createDnsRecord'),
  cmd('dns record update <zone_name> <record_id>', 'updateDnsRecord'),
  cmd('dns record delete <zone_name> <record_id>', 'deleteDnsRecord'),
  cmd('domain list', 'listDomainVerifications'),
  cmd('domain create <domain>', 'createDomainVerification'),
  cmd('domain get <domain_id>', 'getDomainVerification'),
  cmd('domain delete <domain_id>', 'deleteDomainVerification'),
  cmd('domain verify <domain_id>', 'verifyDomain'),
  cmd('dyn hostname list', 'listDynHostnames'),
  cmd('dyn hostname create <hostname>', 'createDynHostname'),
  cmd('dyn hostname get <hostname_id>', 'getDynHostname'),
  cmd('dyn hostname delete <hostname_id>', 'deleteDynHostname'),
  cmd('dyn updates <hostname_id>', 'listDynUpdates'),
  cmd('dyn router-token create <hostname_id>', 'createDynRouterToken'),
  cmd('dyn credential create <hostname_id>', 'createDynUpdaterCredential'),
  // Databases
  cmd('db list', 'listDatabases'),
  cmd('db create', 'createDatabase'),
  cmd('db get <db_type> <db_name>', 'getDatabase'),
  cmd('db info <db_type> <db_name>', 'getDatabaseInfo'),
  cmd('db delete <db_type> <db_name>', 'deleteDatabase'),
  cmd('db credentials <db_type> <db_name>', 'getDatabaseCredentials'),
  cmd('db rotate <db_type> <db_name>', 'rotateDatabaseCredentials'),
  cmd('db snapshot <db_type> <db_name>', 'createDatabaseSnapshot'),
  cmd('db snapshots <db_type> <db_name>', 'listDatabaseSnapshots'),
  cmd('db restore <db_type> <db_name>', 'restoreDatabase'),
  cmd('db firewall list <db_type> <db_name>', 'listDatabaseFirewallRules'),
  cmd('db firewall add <db_type> <db_name>', 'addDatabaseFirewallRule'),
  // Messaging
  cmd('sms send', 'sendSms'),
  cmd('sms list', 'listSmsMessages'),
  cmd('sms get <message_id>', 'getSmsMessage'),
  cmd('sms cancel <message_id>', 'cancelSmsMessage'),
  cmd('sms sender list', 'listSmsSenderProfiles'),
  cmd('sms sender create', 'createSmsSenderProfile'),
  cmd('sms sender delete <profile_id>', 'deleteSmsSenderProfile'),
  cmd('sms keyword list', 'listSmsKeywords'),
  cmd('sms keyword reserve <keyword>', 'reserveSmsKeyword'),
  cmd('sms keyword release <keyword_id>', 'releaseSmsKeyword'),
  cmd('verify start <recipient>', 'startVerification'),
  cmd('verify check <session_id> <code>', 'checkVerification'),
  cmd('verify status <session_id>', 'getVerificationStatus'),
  cmd('verify cancel <session_id>', 'cancelVerification'),
  cmd('contact list', 'listContacts'),
  cmd('contact create <name>', 'createContact'),
  cmd('contact get <contact_id>', 'getContact'),
  cmd('contact delete <contact_id>', 'deleteContact'),
  cmd('contact group list', 'listContactGroups'),
  cmd('contact group create <name>', 'createContactGroup'),
  cmd('contact group delete <group_id>', 'deleteContactGroup'),
  // IoT
  cmd('iot device list', 'iotListDevices'),
  cmd('iot device create <name>', 'iotCreateDevice'),
  cmd('iot device get <device_id>', 'iotGetDevice'),
  cmd('iot device update <device_id>', 'iotUpdateDevice'),
  cmd('iot device delete <device_id>', 'iotDeleteDevice'),
  cmd('iot device rotate <device_id>', 'iotRotateDeviceCredentials'),
  cmd('iot device health <device_id>', 'iotDeviceHealth'),
  cmd('iot device command <device_id>', 'iotSendCommand'),
  cmd('iot telemetry <device_id>', 'iotDeviceTelemetry'),
  cmd('iot telemetry latest <device_id>', 'iotDeviceTelemetryLatest'),
  cmd('iot group list', 'iotListGroups'),
  cmd('iot group create <name>', 'iotCreateGroup'),
  cmd('iot group get <group_id>', 'iotGetGroup'),
  cmd('iot group delete <group_id>', 'iotDeleteGroup'),
  cmd('iot connection', 'iotConnectionInfo'),
  cmd('iot rule list', 'iotListRules'),
  cmd('iot rule create', 'iotCreateRule'),
  cmd('iot rule get <rule_id>', 'iotGetRule'),
  cmd('iot rule delete <rule_id>', 'iotDeleteRule'),
  cmd('iot alarm list', 'iotListAlarms'),
  cmd('iot alarm get <alarm_id>', 'iotGetAlarm'),
  cmd('iot alarm acknowledge <alarm_id>', 'iotAcknowledgeAlarm'),
  cmd('iot alarm resolve <alarm_id>', 'iotResolveAlarm'),
  // Live events
  cmd('live event list', 'listLiveEvents'),
  cmd('live event create <name>', 'createLiveEvent'),
  cmd('live event get <event_id>', 'getLiveEvent'),
  cmd('live event update <event_id>', 'updateLiveEvent'),
  cmd('live event delete <event_id>', 'deleteLiveEvent'),
  cmd('live event start <event_id>', 'startLiveEvent'),
  cmd('live event stop <event_id>', 'stopLiveEvent'),
  cmd('live event rehearse <event_id>', 'startLiveEventRehearsal'),
  cmd('live event stream-key <event_id>', 'rotateLiveEventStreamKey'),
  cmd('live event ingest <event_id>', 'getLiveEventIngest'),
  cmd('live event health <event_id>', 'getLiveEventHealth'),
  cmd('live event recordings <event_id>', 'listLiveEventRecordings'),
  cmd('live event token create <event_id>', 'createLiveEventWatchToken'),
  // Speech (transcribe is an action)
  cmd('speech job list', 'speechListJobs'),
  cmd('speech job get <job_id>', 'speechGetJob'),
  cmd('speech job delete <job_id>', 'speechDeleteJob'),
  cmd('speech export <job_id>', 'speechExport'),
  // Language models and chatbots (llm chat and chatbot ask are actions)
  cmd('llm models', 'listLlmModels'),
  cmd('llm usage', 'llmUsage'),
  cmd('llm embed', 'createEmbeddings'),
  cmd('chatbot list', 'chatbotListBots'),
  cmd('chatbot create <name>', 'chatbotCreateBot'),
  cmd('chatbot get <bot_id>', 'chatbotGetBot'),
  cmd('chatbot delete <bot_id>', 'chatbotDeleteBot'),
  cmd('chatbot source list <bot_id>', 'chatbotListSources'),
  cmd('chatbot source add <bot_id>', 'chatbotAddSource'),
  cmd('chatbot source delete <bot_id> <source_id>', 'chatbotDeleteSource'),
  // IP intelligence
  cmd('ip lookup <ip>', 'getIpSummary'),
  cmd('ip geo <ip>', 'getIpGeo'),
  cmd('ip threat <ip>', 'getIpThreat'),
  cmd('ip asn <asn>', 'getIpAsn'),
  cmd('ip country <code>', 'getIpCountry'),
  cmd('ip report', 'reportIp'),
  // GPU jobs
  cmd('gpu engines', 'gpuEngines'),
  cmd('gpu job list', 'gpuListJobs'),
  cmd('gpu job create', 'gpuCreateJob', { op: 'gpuGetJob', param: 'job_id', until: GPU_DONE }),
  cmd('gpu job get <job_id>', 'gpuGetJob'),
  cmd('gpu job cancel <job_id>', 'gpuCancelJob'),
  // Virtual servers (ssh is an action)
  cmd('vps plans', 'vpsPlans'),
  cmd('vps templates', 'vpsOsTemplates'),
  cmd('vps list', 'vpsList'),
  cmd('vps create', 'vpsCreate', VPS_WAIT),
  cmd('vps get <vps_id>', 'vpsGet'),
  cmd('vps delete <vps_id>', 'vpsDelete'),
  cmd('vps start <vps_id>', 'vpsStart', VPS_WAIT),
  cmd('vps stop <vps_id>', 'vpsStop', VPS_WAIT),
  cmd('vps reboot <vps_id>', 'vpsReboot', VPS_WAIT),
  cmd('vps snapshot <vps_id>', 'vpsCreateSnapshot'),
  cmd('vps snapshot list <vps_id>', 'vpsSnapshots'),
  cmd('vps snapshot delete <vps_id> <snapshot_name>', 'vpsDeleteSnapshot'),
  cmd('vps snapshot rollback <vps_id> <snapshot_name>', 'vpsRollback'),
  cmd('vps backup list <vps_id>', 'vpsBackups'),
  cmd('vps backup create <vps_id>', 'vpsCreateBackup'),
  // Managed clusters
  cmd('k8s versions', 'k8sVersions'),
  cmd('k8s plans', 'k8sPlans'),
  cmd('k8s cluster list', 'k8sListClusters'),
  cmd('k8s cluster create', 'k8sCreateCluster', CLUSTER_WAIT),
  cmd('k8s cluster get <id>', 'k8sGetCluster'),
  cmd('k8s cluster delete <id>', 'k8sDeleteCluster'),
  cmd('k8s cluster history <id>', 'k8sHistory'),
  cmd('k8s cluster upgrade <id>', 'k8sUpgrade', CLUSTER_WAIT),
  cmd('k8s pool add <id>', 'k8sAddNodePool'),
  cmd('k8s pool scale <id> <pool>', 'k8sScaleNodePool'),
  cmd('k8s pool delete <id> <pool>', 'k8sDeleteNodePool'),
  cmd('k8s kubeconfig <id>', 'k8sKubeconfig'),
  // Container apps (logs is an action)
  cmd('apps plans', 'appsPlans'),
  cmd('apps list', 'appsList'),
  cmd('apps create <name>', 'appsCreate', APP_WAIT),
  cmd('apps get <app_id>', 'appsGet'),
  cmd('apps delete <app_id>', 'appsDelete'),
  cmd('apps deploy <app_id>', 'appsDeploy', REVISION_WAIT),
  cmd('apps revisions <app_id>', 'appsRevisions'),
  cmd('apps rollback <app_id>', 'appsRollback'),
  cmd('apps instances <app_id>', 'appsInstances'),
  cmd('apps suspend <app_id>', 'appsSuspend'),
  cmd('apps resume <app_id>', 'appsResume'),
  cmd('apps domain add <app_id>', 'appsCreateDomain'),
  cmd('apps domain list <app_id>', 'appsDomains'),
  cmd('apps volume create <app_id>', 'appsCreateVolume'),
  cmd('apps volume list <app_id>', 'appsVolumes'),
];

/** The alias whose words begin `words`, longest first. */
export function findAlias(words: string[]): Alias | undefined {
  return [...ALIASES]
    .sort((a, b) => b.words.length - a.words.length)
    .find((a) => a.words.every((w, i) => words[i] === w));
}

/** True when `word` starts some alias (the CLI handles the command). */
export const isAliasRoot = (word: string | undefined) => ALIASES.some((a) => a.words[0] === word);
