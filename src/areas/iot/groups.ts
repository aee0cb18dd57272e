import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { Store } from '../../kernel/store/store.js';
import { iotErrors } from './errors.js';
import type { IotGroupsTable } from './migrations.js';
import { IotRepo } from './repo.js';

export interface GroupInput {
  name: string;
  description?: string | null;
  color?: string | null;
}

/** Device groups: named sets of an account's devices (a device may be in several). */
export class IotGroups {
  private readonly repo: IotRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly identity: IdentityService,
  ) {
    this.repo = IotRepo.of(store);
  }

  async create(customerId: string, input: GroupInput) {
    const now = this.clock.nowMs();
    const row: IotGroupsTable = {
      id: newId(),
      customer_id: customerId,
      name: input.name,
      description: input.description ?? null,
      color: input.color ?? null,
      created_at: now,
      updated_at: now,
    };
    const plan = (await this.identity.getCustomer(customerId))?.plan ?? 'free';
    const max = this.limits.of('iot.groups', plan);
    await this.store.unitOfWork({ locks: [`iot:groups:${customerId}`] }, async ({ tx }) => {
      const repo = IotRepo.over(tx);
      if (max !== null && (await repo.countGroups(customerId)) >= max) throw iotErrors.groupQuota(max);
      await repo.insertGroup(row);
    });
    return view(row);
  }

  async list(customerId: string) {
    return { groups: (await this.repo.groups(customerId)).map(view) };
  }

  async get(customerId: string, id: string) {
    return view(await this.row(customerId, id));
  }

  /** PUT: the fields given replace the stored ones; `name` is required as on create. */
  async replace(customerId: string, id: string, input: GroupInput) {
    const row = await this.row(customerId, id);
    const patch = {
      name: input.name,
      description: input.description === undefined ? row.description : input.description,
      color: input.color === undefined ? row.color : input.color,
      updated_at: this.clock.nowMs(),
    };
    await this.repo.updateGroup(id, patch);
    return view({ ...row, ...patch });
  }

  async remove(customerId: string, id: string) {
    await this.row(customerId, id);
    await this.store.unitOfWork({ locks: [`iot:group:${id}`] }, ({ tx }) => IotRepo.over(tx).deleteGroup(id));
  }

  /** Adds devices by `device_id`; when any is unknown nothing is added and the answer names them. */
  async addDevices(customerId: string, id: string, deviceIds: string[]) {
    await this.row(customerId, id);
    const wanted = [...new Set(deviceIds)];
    return this.store.unitOfWork({ locks: [`iot:group:${id}`] }, async ({ tx }) => {
      const repo = IotRepo.over(tx);
      const found = await repo.devicesByIds(customerId, wanted);
      const known = new Set(found.map((d) => d.device_id));
      const unknown = wanted.filter((d) => !known.has(d));
      if (unknown.length) throw iotErrors.unknownDevices(unknown);
      const members = await repo.members(id);
      const added: string[] = [];
      for (const d of found)
        if (!members.has(d.id)) {
          await repo.addMember(id, d.id);
          added.push(d.device_id);
        }
      return { added: wanted.filter((d) => added.includes(d)) };
    });
  }

  async removeDevice(customerId: string, id: string, deviceId: string) {
    await this.row(customerId, id);
    const device = await this.repo.device(customerId, deviceId);
    if (!device) throw iotErrors.deviceNotFound();
    if (!(await this.repo.removeMember(id, device.id))) throw iotErrors.notMember();
  }

  private async row(customerId: string, id: string) {
    const row = await this.repo.group(customerId, id);
    if (!row) throw iotErrors.groupNotFound();
    return row;
  }
}

const view = (g: IotGroupsTable) => ({
  id: g.id,
  name: g.name,
  description: g.description,
  color: g.color,
  created_at: new Date(g.created_at).toISOString(),
  updated_at: new Date(g.updated_at).toISOString(),
});
