// A Testcontainers module for Fjord, in the manner of LocalStack's: start the image, wait until
// /readyz says ready, and hand out the endpoints and the development credentials. README.md
// tells how to use it.
import { AbstractStartedContainer, GenericContainer, Wait } from 'testcontainers';

/** The ports Fjord listens on in its image. */
export const FJORD_PORTS = Object.freeze({ api: 8080, s3: 9000, dns: 5300, mqtt: 1883, rtmp: 1935 });

/** Where the image keeps its data, and the credentials Fjord writes on embedded defaults. */
const DATA_DIR = '/var/lib/fjord';
const CREDENTIALS = `${DATA_DIR}/dev-credentials.json`;

/**
 * The roles an area's protocol server runs in. Every area's HTTP API is served by `api`, and
 * `worker` runs every area's background work, so both always run.
 */
const ROLES_OF_AREA = {
  storage: ['s3'],
  dns: ['dns'],
  dyn: ['dns'],
  'domain-verification': ['dns'],
  iot: ['mqtt'],
  live: ['rtmp'],
};

export class FjordContainer extends GenericContainer {
  /** @param {string} [image] the image `npm run image` built, or one you loaded or pushed */
  constructor(image = 'localhost/fjord:latest') {
    super(image);
    /** @type {string[] | null} */
    this.roles = null;
    this.withEnvironment({ FJORD_EMULATOR: 'true', FJORD_DEV_CREDENTIALS: 'true' })
      .withWaitStrategy(Wait.forHttp('/readyz', FJORD_PORTS.api).forStatusCode(200))
      .withStartupTimeout(120_000);
  }

  /**
   * Runs only the protocol servers these areas need (e.g. `storage` → S3, `iot` → MQTT), like
   * LocalStack's SERVICES. Unknown names are refused, so a typo does not silently start less.
   * @param {...string} areas
   */
  withAreas(...areas) {
    const roles = new Set(['api', 'worker']);
    for (const area of areas.flat()) {
      if (typeof area !== 'string' || !/^[a-z-]+$/.test(area)) throw new Error(`not an area name: ${area}`);
      for (const role of ROLES_OF_AREA[area] ?? []) roles.add(role);
    }
    return this.withRoles(...roles);
  }

  /** Runs exactly these roles (`api`, `s3`, `dns`, `mqtt`, `rtmp`, `worker`). @param {...string} roles */
  withRoles(...roles) {
    const known = Object.keys(FJORD_PORTS).concat('worker');
    for (const role of roles) if (!known.includes(role)) throw new Error(`not a Fjord role: ${role}`);
    this.roles = [...new Set(roles)];
    return this;
  }

  async start() {
    const roles = this.roles ?? ['api', 's3', 'dns', 'mqtt', 'rtmp', 'worker'];
    // Every port the image exposes is published, whichever roles run: podman's Docker-compatible
    // API reports an exposed port left unpublished as a binding without ports, which Testcontainers
    // would wait on for ever.
    const { api, s3, dns, mqtt, rtmp } = FJORD_PORTS;
    this.withExposedPorts(api, s3, `${dns}/tcp`, `${dns}/udp`, mqtt, rtmp).withCommand([
      'start',
      '--roles',
      roles.join(','),
    ]);
    return new StartedFjordContainer(await super.start(), roles);
  }
}

export class StartedFjordContainer extends AbstractStartedContainer {
  constructor(started, roles) {
    super(started);
    this.roles = roles;
    /** @type {{ pat: string, operator_token: string | null, customer_id: string } | null} */
    this.credentials = null;
  }

  #url(role) {
    if (!this.roles.includes(role)) throw new Error(`Fjord's ${role} role is not running in this container`);
    return `http://${this.getHost()}:${this.getMappedPort(FJORD_PORTS[role])}`;
  }

  /** The API's base URL, e.g. `http://localhost:32771`. */
  getApiUrl() {
    return this.#url('api');
  }

  /** The S3 endpoint for any S3 client (path-style addressing). */
  getS3Endpoint() {
    return this.#url('s3');
  }

  /** `mqtt://host:port` of the device broker. */
  getMqttUrl() {
    return this.#url('mqtt').replace(/^http/, 'mqtt');
  }

  /** `rtmp://host:port` of the live ingest. */
  getRtmpUrl() {
    return this.#url('rtmp').replace(/^http/, 'rtmp');
  }

  /** `{ host, port }` of the DNS server, over UDP (and TCP on `tcpPort`). */
  getDnsAddress() {
    if (!this.roles.includes('dns')) throw new Error("Fjord's dns role is not running in this container");
    return {
      host: this.getHost(),
      port: this.getMappedPort(FJORD_PORTS.dns, 'udp'),
      tcpPort: this.getMappedPort(FJORD_PORTS.dns, 'tcp'),
    };
  }

  async #readCredentials() {
    if (this.credentials) return this.credentials;
    const { output, exitCode } = await this.exec(['cat', CREDENTIALS]);
    if (exitCode !== 0) throw new Error(`no development credentials in the container: ${output.trim()}`);
    this.credentials = JSON.parse(output);
    return this.credentials;
  }

  /** The development customer's PAT (every scope): send it as `X-API-Key`. */
  async getPat() {
    return (await this.#readCredentials()).pat;
  }

  /** The development customer's id. */
  async getCustomerId() {
    return (await this.#readCredentials()).customer_id;
  }

  /** The operator token, for the admin API (`Authorization: Bearer …`). */
  async getOperatorToken() {
    return (await this.#readCredentials()).operator_token;
  }
}
