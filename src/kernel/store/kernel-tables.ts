/** Row shapes of the kernel's tables. Times are epoch milliseconds; booleans 0/1; JSON as text. */
export interface CustomersTable {
  id: string;
  short_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  customer_type: string;
  status: string;
  plan: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  customer_id: string;
  key_type: 'service' | 'account';
  service: string | null;
  scopes: string;
  description: string | null;
  key_prefix: string;
  key_hash: string;
  is_active: number;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
}

export interface OidcIdentitiesTable {
  issuer: string;
  subject: string;
  customer_id: string;
  created_at: number;
}

export interface IdempotencyKeysTable {
  scope: string;
  key: string;
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  content_type: string | null;
  created_at: number;
  expires_at: number;
}

export interface JobsTable {
  id: string;
  kind: string;
  payload: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  run_at: number;
  attempts: number;
  max_attempts: number;
  lease_until: number | null;
  last_error: string | null;
  unique_key: string | null;
  created_at: number;
  updated_at: number;
}

export interface SchedulesTable {
  name: string;
  job_kind: string;
  interval_seconds: number;
  next_run_at: number;
  last_run_at: number | null;
}

export interface WebhookSecretsTable {
  customer_id: string;
  secret_sealed: string;
  created_at: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  customer_id: string;
  event_type: string;
  url: string;
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  give_up_at: number;
  created_at: number;
  delivered_at: number | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempted_at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface AuditEventsTable {
  id: string;
  customer_id: string;
  area: string;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  actor_type: string;
  actor_id: string | null;
  details: string;
  created_at: number;
}

export interface KernelSettingsTable {
  key: string;
  value: string;
}

/** A console sign-in: the session cookie's hash, and the credential it was exchanged for. */
export interface ConsoleSessionsTable {
  token_hash: string;
  /** Null for an operator's session. */
  customer_id: string | null;
  /** The hash of the PAT signed in with: the session lives only while that key does. */
  key_hash: string | null;
  /** The hash of the operator token signed in with: a changed token ends the session. */
  operator_hash: string | null;
  /** `issuer#subject` of a sign-in through the OIDC issuer: the session lives while that identity stays linked. */
  oidc_identity: string | null;
  created_at: number;
  expires_at: number;
}

export interface KernelTables {
  kernel_settings: KernelSettingsTable;
  customers: CustomersTable;
  api_keys: ApiKeysTable;
  oidc_identities: OidcIdentitiesTable;
  idempotency_keys: IdempotencyKeysTable;
  jobs: JobsTable;
  schedules: SchedulesTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  audit_events: AuditEventsTable;
  console_sessions: ConsoleSessionsTable;
}
