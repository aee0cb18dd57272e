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
