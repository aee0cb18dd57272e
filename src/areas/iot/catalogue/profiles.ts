import type { Clock } from '../../../kernel/clock.js';
import { AppError } from '../../../kernel/errors.js';
import { newId } from '../../../kernel/ids.js';
import type { Limits } from '../../../kernel/limits/quotas.js';
import type { Store } from '../../../kernel/store/store.js';
import { iotErrors } from '../errors.js';
import { IotRepo } from '../repo.js';
import { CatalogueRepo } from './repo.js';
import type { IotProfilesTable } from './tables.js';

export interface ProfileInput {
  name: string;
  description?: string | null;
  device_type?: string | null;
  default_metadata?: Record<string, unknown>;
  datapoint_keys?: string[];
}
export type ProfilePatch = Partial<ProfileInput>;

export const profileErrors = {
  notFound: () => new AppError('not_found', 'profile_not_found', 'No such device profile.'),
  nameTaken: (name: string) =>
    new AppError('conflict', 'profile_exists', `A profile named ${JSON.stringify(name)} already exists.`),
  quota: (max: number) =>
    new AppError('forbidden', 'quota_exceeded', `An account has at most ${max} device profiles.`),
  unknownDatapoints: (keys: string[]) =>
    new AppError('invalid', 'unknown_datapoint', `No datapoint definitions for: ${keys.join(', ')}.`, {
      errors: [{ path: '/body/datapoint_keys', message: `not defined: ${keys.join(', ')}` }],
    }),
  inUse: (rules: string[]) =>
    new AppError('conflict', 'profile_in_use', `Alarm rules target this profile: ${rules.join(', ')}.`, {
      extra: { rule_ids: rules },
    }),
};

/**
 * Device profiles, as ThingsBoard has them: defaults for a kind of device (device_type, metadata,
 * the datapoints it reports). Applying one to a device sets its device_type, adds the profile's
 * metadata keys the device does not have (the device's own values win) and remembers the profile,
 * so alarm rules that target the profile cover the device.
 */
export class Profiles {
  private readonly repo: CatalogueRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    /** Rules that target a profile (set by the alarms part): a profile they name cannot go. */
    private readonly rulesTargeting: (customerId: string, profileId: string) => Promise<string[]>,
  ) {
    this.repo = CatalogueRepo.of(store);
  }

  async create(customerId: string, input: ProfileInput) {
    const now = this.clock.nowMs();
    const row: IotProfilesTable = {
      id: newId(),
      customer_id: customerId,
      name: input.name,
      description: input.description ?? null,
      device_type: input.device_type ?? null,
      default_metadata: JSON.stringify(input.default_metadata ?? {}),
      datapoint_keys: JSON.stringify(unique(input.datapoint_keys ?? [])),
      created_at: now,
      updated_at: now,
    };
    const max = this.limits.of('iot.profiles');
    await this.store.unitOfWork({ locks: [`iot:profiles:${customerId}`] }, async ({ tx }) => {
      const repo = CatalogueRepo.over(tx);
      await this.checkDatapoints(repo, customerId, input.datapoint_keys);
      if (await repo.profileByName(customerId, input.name)) throw profileErrors.nameTaken(input.name);
      if (max !== null && (await repo.countProfiles(customerId)) >= max) throw profileErrors.quota(max);
      await repo.insertProfile(row);
    });
    return this.view(row);
  }

  async list(customerId: string) {
    const rows = await this.repo.profiles(customerId);
    return { profiles: await Promise.all(rows.map((r) => this.view(r))) };
  }

  async get(customerId: string, id: string) {
    return this.view(await this.row(customerId, id));
  }

  async update(customerId: string, id: string, patch: ProfilePatch) {
    return this.store.unitOfWork({ locks: [`iot:profiles:${customerId}`] }, async ({ tx }) => {
      const repo = CatalogueRepo.over(tx);
      const row = await repo.profile(customerId, id);
      if (!row) throw profileErrors.notFound();
      await this.checkDatapoints(repo, customerId, patch.datapoint_keys);
      if (
        patch.name !== undefined &&
        patch.name !== row.name &&
        (await repo.profileByName(customerId, patch.name))
      )
        throw profileErrors.nameTaken(patch.name);
      const next: IotProfilesTable = {
        ...row,
        name: patch.name ?? row.name,
        description: patch.description === undefined ? row.description : patch.description,
        device_type: patch.device_type === undefined ? row.device_type : patch.device_type,
        default_metadata:
          patch.default_metadata === undefined
            ? row.default_metadata
            : JSON.stringify(patch.default_metadata),
        datapoint_keys:
          patch.datapoint_keys === undefined
            ? row.datapoint_keys
            : JSON.stringify(unique(patch.datapoint_keys)),
        updated_at: this.clock.nowMs(),
      };
      await repo.updateProfile(id, next);
      return this.view(next, repo);
    });
  }

  /** Devices keep what the profile gave them; rules that target it must be changed first. */
  async remove(customerId: string, id: string) {
    await this.row(customerId, id);
    const rules = await this.rulesTargeting(customerId, id);
    if (rules.length) throw profileErrors.inUse(rules);
    await this.store.unitOfWork({ locks: [`iot:profiles:${customerId}`] }, ({ tx }) =>
      CatalogueRepo.over(tx).deleteProfile(id),
    );
  }

  /** Applies the profile's defaults to one device and answers what the device now has. */
  async apply(customerId: string, id: string, deviceId: string) {
    const profile = await this.row(customerId, id);
    const devices = IotRepo.of(this.store);
    const device = await devices.device(customerId, deviceId);
    if (!device) throw iotErrors.deviceNotFound();
    const defaults = JSON.parse(profile.default_metadata) as Record<string, unknown>;
    const own = JSON.parse(device.metadata) as Record<string, unknown>;
    const metadata = { ...defaults, ...own };
    const changes = {
      profile_id: profile.id,
      device_type: profile.device_type ?? device.device_type,
      metadata: JSON.stringify(metadata),
      updated_at: this.clock.nowMs(),
    };
    await devices.updateDevice(device.id, changes);
    return {
      profile_id: profile.id,
      device_id: device.device_id,
      device_type: changes.device_type,
      metadata,
      applied_at: new Date(changes.updated_at).toISOString(),
    };
  }

  /** The profile a device has, for rules that target profiles. */
  async profileOf(devicePk: string): Promise<string | null> {
    return (await this.repo.profileIdOf(devicePk)) ?? null;
  }

  private async checkDatapoints(repo: CatalogueRepo, customerId: string, keys: string[] | undefined) {
    if (!keys?.length) return;
    const known = new Set((await repo.datapoints(customerId)).map((d) => d.key));
    const missing = unique(keys).filter((k) => !known.has(k));
    if (missing.length) throw profileErrors.unknownDatapoints(missing);
  }

  private async row(customerId: string, id: string) {
    const row = await this.repo.profile(customerId, id);
    if (!row) throw profileErrors.notFound();
    return row;
  }

  private async view(p: IotProfilesTable, repo = this.repo) {
    return {
      id: p.id,
      name: p.name,
      description: p.description,
      device_type: p.device_type,
      default_metadata: JSON.parse(p.default_metadata) as Record<string, unknown>,
      datapoint_keys: JSON.parse(p.datapoint_keys) as string[],
      device_count: await repo.devicesWithProfile(p.id),
      created_at: new Date(Number(p.created_at)).toISOString(),
      updated_at: new Date(Number(p.updated_at)).toISOString(),
    };
  }
}

const unique = (xs: string[]) => [...new Set(xs)];
