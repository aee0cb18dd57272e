import { AppError } from '../../kernel/errors.js';

export const iotErrors = {
  deviceNotFound: () => new AppError('not_found', 'device_not_found', 'No such IoT device.'),
  deviceExists: (id: string) =>
    new AppError('conflict', 'device_exists', `A device with device_id ${id} already exists.`),
  invalidDeviceId: () =>
    new AppError(
      'invalid',
      'invalid_device_id',
      'device_id is 1-64 of A-Z, a-z, 0-9, -, _, . and : (a safe MQTT client id).',
      { errors: [{ path: '/body/device_id', message: 'not a safe MQTT client id' }] },
    ),
  invalidTag: (tag: string) =>
    new AppError('invalid', 'invalid_tag', `Tag ${JSON.stringify(tag)} is not 1-64 printable characters.`, {
      errors: [{ path: '/body', message: 'tags are 1-64 printable characters' }],
    }),
  tagNotFound: () => new AppError('not_found', 'tag_not_found', 'The device has no such tag.'),
  tooManyTags: (max: number) =>
    new AppError('invalid', 'too_many_tags', `A device has at most ${max} tags.`, {
      errors: [{ path: '/body', message: `at most ${max} tags` }],
    }),
  quota: (max: number, plan: string) =>
    new AppError(
      'forbidden',
      'quota_exceeded',
      `The ${plan} plan allows ${max} IoT devices; delete one or change plan.`,
    ),
  groupNotFound: () => new AppError('not_found', 'group_not_found', 'No such device group.'),
  groupQuota: (max: number) =>
    new AppError('forbidden', 'quota_exceeded', `An account has at most ${max} device groups.`),
  notMember: () => new AppError('not_found', 'device_not_in_group', 'The device is not in this group.'),
  unknownDevices: (ids: string[]) =>
    new AppError('not_found', 'device_not_found', `No such devices: ${ids.join(', ')}.`, {
      extra: { unknown_device_ids: ids },
    }),
  badWindow: (message: string) =>
    new AppError('invalid', 'invalid_time_window', message, { errors: [{ path: '/query', message }] }),
  commandTooLarge: (max: number) =>
    new AppError(
      'invalid',
      'command_too_large',
      `A command (name and params as JSON) is at most ${max} bytes.`,
      {
        errors: [{ path: '/body/params', message: `at most ${max} bytes with the name` }],
      },
    ),
  deviceOffline: (id: string) =>
    new AppError(
      'conflict',
      'device_offline',
      `Device ${id} is not connected; commands reach connected devices only.`,
    ),
};
