import type { Kernel } from '../kernel/kernel.js';
import type { AreaInstance, AreaModule, PlugBoard } from '../kernel/wiring.js';
import type { AccountService, SshKeyUsageCounter } from './account/service.js';
import type { AppsService } from './apps/service.js';
import type { ChatbotService } from './chatbot/service.js';
import type { ClusterService } from './clusters/service.js';
import type { ContactsService } from './contacts/service.js';
import type { DatabasesService } from './databases/service.js';
import type { DnsService } from './dns/service.js';
import type { DomainVerificationService } from './domain-verification/service.js';
import type { DynService } from './dyn/service.js';
import type { GpuService } from './gpu/service.js';
import type { IotService } from './iot/service.js';
import type { IpService } from './ip/service.js';
import type { LiveService } from './live/service.js';
import type { LlmService } from './llm/service.js';
import type { RegionsService } from './regions/service.js';
import type { SmsService } from './sms/service.js';
import type { SpeechService } from './speech/service.js';
import type { StorageService } from './storage/service.js';
import type { VerifyService } from './verify/service.js';
import type { VpsService } from './vps/service.js';

/**
 * What each area provides to the others, by area name. An area's `setup` must return this service;
 * an area that needs it names it in `needs` (or `optional`) and receives it typed.
 */
export interface AreaServices {
  account: AccountService;
  regions: RegionsService;
  storage: StorageService;
  databases: DatabasesService;
  dns: DnsService;
  'domain-verification': DomainVerificationService;
  dyn: DynService;
  contacts: ContactsService;
  sms: SmsService;
  verify: VerifyService;
  llm: LlmService;
  chatbot: ChatbotService;
  gpu: GpuService;
  live: LiveService;
  ip: IpService;
  vps: VpsService;
  clusters: ClusterService;
  iot: IotService;
  speech: SpeechService;
  apps: AppsService;
}

/**
 * Extension points: where a later area plugs an implementation into an earlier one that cannot
 * need it (it would be a cycle). Named `<area that reads it>.<what>`.
 */
export interface ExtensionPoints {
  /** How many virtual servers use each of a customer's SSH keys (`vm_count`). */
  'account.ssh-key-usage': SshKeyUsageCounter;
}

export type AreaName = keyof AreaServices;
export type Plugs = PlugBoard<ExtensionPoints>;

type Deps<N extends AreaName, O extends AreaName> = { [K in N]: AreaServices[K] } & {
  [K in O]?: AreaServices[K] | undefined;
};

type Provided<Name> = Name extends AreaName
  ? AreaInstance<AreaServices[Name]> & { service: AreaServices[Name] }
  : AreaInstance<never> & { service?: undefined };

export interface AreaDefinition<Name extends string, N extends AreaName, O extends AreaName> {
  name: Name;
  /** Areas whose services this one cannot work without. */
  needs?: readonly N[];
  /** Areas whose services this one uses when they are present. */
  optional?: readonly O[];
  migrations?: AreaModule['migrations'];
  setup(kernel: Kernel, deps: Deps<N, O>, plugs: Plugs): Provided<Name> | Promise<Provided<Name>>;
}

/** Typed plugs an area's instance offers: `plugs: plugsFor({ 'account.ssh-key-usage': … })`. */
export const plugsFor = (plugs: Partial<ExtensionPoints>): Record<string, unknown> => plugs;

/**
 * An area module. The types check that `setup` returns the service its name promises and that
 * it uses only the services it declares; the composition root orders areas by `needs`/`optional`.
 */
export function defineArea<
  const Name extends string,
  const N extends AreaName = never,
  const O extends AreaName = never,
>(def: AreaDefinition<Name, N, O>): AreaModule {
  return {
    name: def.name,
    needs: def.needs ?? [],
    optional: def.optional ?? [],
    migrations: def.migrations,
    // The erasure happens here, once: the root hands each area exactly the services it declared.
    setup: async (kernel, deps, plugs) =>
      def.setup(kernel, deps as Deps<N, O>, plugs as unknown as Plugs) as Promise<AreaInstance>,
  };
}

/** An area's service from the composition root's set-up areas, typed by its name. */
export function serviceOf<K extends AreaName>(
  areas: ReadonlyMap<string, AreaInstance>,
  name: K,
): AreaServices[K] | undefined {
  // defineArea checked at compile time that the area named K returns AreaServices[K].
  return areas.get(name)?.service as AreaServices[K] | undefined;
}
