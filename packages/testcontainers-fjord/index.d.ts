import { AbstractStartedContainer, GenericContainer, type StartedTestContainer } from 'testcontainers';

export declare const FJORD_PORTS: Readonly<{ api: 8080; s3: 9000; dns: 5300; mqtt: 1883; rtmp: 1935 }>;

export type FjordRole = 'api' | 's3' | 'dns' | 'mqtt' | 'rtmp' | 'worker';

export declare class FjordContainer extends GenericContainer {
  constructor(image?: string);
  roles: FjordRole[] | null;
  /** Runs only the protocol servers these areas need (`storage` → S3, `dns` → DNS, `iot` → MQTT, `live` → RTMP). */
  withAreas(...areas: string[]): this;
  /** Runs exactly these roles. */
  withRoles(...roles: FjordRole[]): this;
  start(): Promise<StartedFjordContainer>;
}

export declare class StartedFjordContainer extends AbstractStartedContainer {
  constructor(started: StartedTestContainer, roles: FjordRole[]);
  readonly roles: FjordRole[];
  getApiUrl(): string;
  getS3Endpoint(): string;
  getMqttUrl(): string;
  getRtmpUrl(): string;
  getDnsAddress(): { host: string; port: number; tcpPort: number };
  getPat(): Promise<string>;
  getCustomerId(): Promise<string>;
  getOperatorToken(): Promise<string | null>;
}
