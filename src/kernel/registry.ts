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
  private readonly serviceProviders: ServiceEntryProvider[] = [];
  readonly backends: BackendReport[] = [];
  readonly listeners: ListenerReport[] = [];
  /** Optional needs of areas whose provider is not in this build (see kernel/wiring.ts). */
  readonly absentNeeds: { area: string; need: string }[] = [];

  addServiceProvider(provider: ServiceEntryProvider): void {
    this.serviceProviders.push(provider);
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
    const lists = await Promise.all(this.serviceProviders.map((p) => p(customerId)));
    return lists.flat().sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }
}
