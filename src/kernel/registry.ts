/**
 * What areas report about themselves, collected in one place: entries of the account services
 * list, the back ends they drive (real or simulated) for the banner and `/v1/account/services`,
 * and the listeners they opened.
 */
export interface ServiceEntry {
  id: string;
  service_type: string;
  name: string;
  status: string;
  region: string | null;
  created_at: string;
  metadata: Record<string, unknown>;
  api: { kind: string; openapi: string; docs: string; base_url: string };
}

export type ServiceEntryProvider = (customerId: string) => Promise<ServiceEntry[]>;

export interface BackendReport {
  area: string;
  name: string;
  driver: string;
  simulated: boolean;
  detail?: string;
}

/**
 * A kind of credential some area accepts. Every kind follows one rule (`identity.isActive`): it
 * works only while its customer is active, so suspension stops it from the next request, and
 * revoking it stops it from the next request too. The suspension test walks every kind
 * registered here, so a new kind cannot ship without being covered.
 */
export interface CredentialKind {
  /** e.g. `pat`, `s3-access-key`, `dyn-router-token`. */
  name: string;
  area: string;
  /** Where it is presented, for docs/auth.md. */
  doc: string;
}

export interface ListenerReport {
  role: string;
  protocol: string;
  address: string;
}

export class Registry {
  private readonly serviceProviders: { area: string | null; provider: ServiceEntryProvider }[] = [];
  /** The area whose `setup` runs now: providers it adds are its own (set by the composition root). */
  private areaSettingUp: string | null = null;
  readonly backends: BackendReport[] = [];
  readonly listeners: ListenerReport[] = [];
  readonly credentialKinds: CredentialKind[] = [];
  /** Optional needs of areas whose provider is not in this build (see kernel/wiring.ts). */
  readonly absentNeeds: { area: string; need: string }[] = [];

  addServiceProvider(provider: ServiceEntryProvider): void {
    this.serviceProviders.push({ area: this.areaSettingUp, provider });
  }

  /** Called by the composition root around each area's `setup`. */
  beginAreaSetup(area: string | null): void {
    this.areaSettingUp = area;
  }

  addBackend(report: BackendReport): void {
    this.backends.push(report);
  }

  addAbsentNeed(absent: { area: string; need: string }): void {
    this.absentNeeds.push(absent);
  }

  addCredentialKind(kind: CredentialKind): void {
    this.credentialKinds.push(kind);
  }

  addListener(report: ListenerReport): void {
    this.listeners.push(report);
  }

  async servicesOf(customerId: string): Promise<ServiceEntry[]> {
    const lists = await Promise.all(
      this.serviceProviders.map(async ({ area, provider }) => {
        const entries = await provider(customerId);
        const absent = this.absentNeeds.filter((a) => a.area === area).map((a) => a.need);
        // An entry says which optional services its area works without in this build, so a client
        // sees why (say) SMS cannot send to contact groups instead of meeting a 503 later.
        return absent.length
          ? entries.map((e) => ({ ...e, metadata: { ...e.metadata, absent_optional_services: absent } }))
          : entries;
      }),
    );
    return lists.flat().sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }
}
