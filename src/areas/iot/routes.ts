import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { pageOf } from '../../kernel/http/pagination.js';
import { defineRoute } from '../../kernel/http/route.js';
import {
  CreateDeviceBody,
  Device,
  DeviceList,
  DeviceParams,
  DeviceWithCredentials,
  LatestView,
  ListDevicesQuery,
  MqttCredentials,
  PatchDeviceBody,
  TagParams,
  TagsBody,
  TelemetryQuery,
  TelemetryView,
} from './schemas.js';
import type { IotService } from './service.js';

const TAG = 'IoT';
const access = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['iot'],
  scopes: [scope],
  oidc: true,
  bearer: true,
});
const Empty = Type.Null({ description: 'No content' });

export function iotRoutes(iot: IotService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/iot/devices',
      operationId: 'iotCreateDevice',
      tag: TAG,
      summary: 'Register a device; its MQTT password is in the answer and never shown again',
      access: access('iot:write'),
      rateLimit: ['iot'],
      body: CreateDeviceBody,
      response: { 201: DeviceWithCredentials },
      errors: [403, 409],
      handler: async ({ principal, body, reply }) => {
        reply.code(201);
        return iot.create(principal.customerId, body);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/devices',
      operationId: 'iotListDevices',
      tag: TAG,
      summary: 'Devices, oldest first, filtered by device_type, tag, is_online and is_active',
      access: access('iot:read'),
      rateLimit: ['iot'],
      query: ListDevicesQuery,
      response: { 200: DeviceList },
      handler: async ({ principal, query }) => {
        const { device_type, tag, is_online, is_active } = query;
        return iot.list(
          principal.customerId,
          { device_type, tag, is_online, is_active },
          pageOf(query, 'page_size', 50),
        );
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/devices/:device_id',
      operationId: 'iotGetDevice',
      tag: TAG,
      summary: 'A device',
      access: access('iot:read'),
      rateLimit: ['iot'],
      params: DeviceParams,
      response: { 200: Device },
      errors: [404],
      handler: async ({ principal, params }) => iot.get(principal.customerId, params.device_id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/iot/devices/:device_id',
      operationId: 'iotUpdateDevice',
      tag: TAG,
      summary:
        'Change a device; `metadata` replaces the stored object, `is_active: false` refuses its logins',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: DeviceParams,
      body: PatchDeviceBody,
      response: { 200: Device },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        iot.update(principal.customerId, params.device_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/iot/devices/:device_id',
      operationId: 'iotDeleteDevice',
      tag: TAG,
      summary: 'Delete a device and revoke its MQTT credentials (irreversible)',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: DeviceParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        await iot.remove(principal.customerId, params.device_id);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/iot/devices/:device_id/credentials/rotate',
      operationId: 'iotRotateDeviceCredentials',
      tag: TAG,
      summary: 'Give the device a new MQTT password, shown once; the old one stops working at once',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: DeviceParams,
      response: { 200: MqttCredentials },
      errors: [404],
      handler: async ({ principal, params }) => iot.rotateCredentials(principal.customerId, params.device_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/devices/:device_id/tags',
      operationId: 'iotListDeviceTags',
      tag: TAG,
      summary: 'A device’s tags, in the order they were added',
      access: access('iot:read'),
      rateLimit: ['iot'],
      params: DeviceParams,
      response: { 200: Type.Object({ tags: Type.Array(Type.String()) }) },
      errors: [404],
      handler: async ({ principal, params }) => iot.tags(principal.customerId, params.device_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/iot/devices/:device_id/tags',
      operationId: 'iotAddDeviceTags',
      tag: TAG,
      summary: 'Add tags (the body is a bare JSON array); `added` lists only the new ones',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: DeviceParams,
      body: TagsBody,
      response: { 200: Type.Object({ added: Type.Array(Type.String()) }) },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        iot.addTags(principal.customerId, params.device_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/iot/devices/:device_id/tags/:tag',
      operationId: 'iotRemoveDeviceTag',
      tag: TAG,
      summary: 'Remove a tag from a device',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: TagParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        await iot.removeTag(principal.customerId, params.device_id, params.tag);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/devices/:device_id/telemetry',
      operationId: 'iotDeviceTelemetry',
      tag: TAG,
      summary: 'Stored telemetry points, newest first',
      access: access('iot:read'),
      rateLimit: ['iot'],
      params: DeviceParams,
      query: TelemetryQuery,
      response: { 200: TelemetryView },
      errors: [404],
      handler: async ({ principal, params, query }) =>
        iot.telemetry(principal.customerId, params.device_id, {
          keys: query.keys
            ?.split(',')
            .map((k) => k.trim())
            .filter(Boolean),
          from: query.from === undefined ? undefined : Date.parse(query.from),
          to: query.to === undefined ? undefined : Date.parse(query.to),
          limit: query.limit ?? 100,
        }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/devices/:device_id/telemetry/latest',
      operationId: 'iotDeviceTelemetryLatest',
      tag: TAG,
      summary: 'The newest value and its time for each key the device has sent',
      access: access('iot:read'),
      rateLimit: ['iot'],
      params: DeviceParams,
      response: { 200: LatestView },
      errors: [404],
      handler: async ({ principal, params }) => iot.latest(principal.customerId, params.device_id),
    }),
  ];
}
