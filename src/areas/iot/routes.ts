import { Type } from '@sinclair/typebox';
import { pageOf } from '../../kernel/http/pagination.js';
import { defineRoute } from '../../kernel/http/route.js';
import { iotAccess } from './catalogue/routes.js';
import type { IotGroups } from './groups.js';
import type { IotInsights } from './insights.js';
import {
  CommandBody,
  CommandView,
  CreateDeviceBody,
  Device,
  DeviceList,
  DeviceParams,
  DeviceWithCredentials,
  Group,
  GroupBody,
  GroupDeviceParams,
  GroupDevicesBody,
  GroupParams,
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
import type { IotTags } from './tags.js';
import type { TelemetryQueries, TelemetryRequest } from './telemetry-queries.js';

const TAG = 'IoT';
const access = iotAccess;
const Empty = Type.Null({ description: 'No content' });

export interface IotParts {
  iot: IotService;
  groups: IotGroups;
  tags: IotTags;
  insights: IotInsights;
  telemetry: TelemetryQueries;
}

export function iotRoutes({ iot, groups, tags, insights, telemetry }: IotParts) {
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
      summary: 'Devices, oldest first, filtered by device_type, tag, group_id, is_online and is_active',
      access: access('iot:read'),
      rateLimit: ['iot'],
      query: ListDevicesQuery,
      response: { 200: DeviceList },
      handler: async ({ principal, query }) => {
        const { device_type, tag, group_id, is_online, is_active } = query;
        return iot.list(
          principal.customerId,
          { device_type, tag, group_id, is_online, is_active },
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
      handler: async ({ principal, params }) => tags.tags(principal.customerId, params.device_id),
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
        tags.addTags(principal.customerId, params.device_id, body),
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
        await tags.removeTag(principal.customerId, params.device_id, params.tag);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/devices/:device_id/telemetry',
      operationId: 'iotDeviceTelemetry',
      tag: TAG,
      summary: 'Stored telemetry, newest first: raw points, or avg/min/max/sum/count per interval',
      access: access('iot:read'),
      rateLimit: ['iot'],
      params: DeviceParams,
      query: TelemetryQuery,
      response: { 200: TelemetryView },
      errors: [404],
      handler: async ({ principal, params, query }) =>
        telemetry.telemetry(principal.customerId, params.device_id, {
          keys: query.keys
            ?.split(',')
            .map((k) => k.trim())
            .filter(Boolean),
          from: query.from === undefined ? undefined : Date.parse(query.from),
          to: query.to === undefined ? undefined : Date.parse(query.to),
          limit: query.limit ?? 100,
          aggregation: query.aggregation as TelemetryRequest['aggregation'],
          interval: query.interval,
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
      handler: async ({ principal, params }) => telemetry.latest(principal.customerId, params.device_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/groups',
      operationId: 'iotListGroups',
      tag: TAG,
      summary: 'Device groups, oldest first',
      access: access('iot:read'),
      rateLimit: ['iot'],
      response: { 200: Type.Object({ groups: Type.Array(Group) }) },
      handler: async ({ principal }) => groups.list(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/iot/groups',
      operationId: 'iotCreateGroup',
      tag: TAG,
      summary: 'Create a device group',
      access: access('iot:write'),
      rateLimit: ['iot'],
      body: GroupBody,
      response: { 201: Group },
      errors: [403],
      handler: async ({ principal, body, reply }) => {
        reply.code(201);
        return groups.create(principal.customerId, body);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/groups/:group_id',
      operationId: 'iotGetGroup',
      tag: TAG,
      summary: 'A device group',
      access: access('iot:read'),
      rateLimit: ['iot'],
      params: GroupParams,
      response: { 200: Group },
      errors: [404],
      handler: async ({ principal, params }) => groups.get(principal.customerId, params.group_id),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/iot/groups/:group_id',
      operationId: 'iotReplaceGroup',
      tag: TAG,
      summary: 'Change a device group (`name` required; fields left out keep their value)',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: GroupParams,
      body: GroupBody,
      response: { 200: Group },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        groups.replace(principal.customerId, params.group_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/iot/groups/:group_id',
      operationId: 'iotDeleteGroup',
      tag: TAG,
      summary: 'Delete a device group (its devices stay)',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: GroupParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        await groups.remove(principal.customerId, params.group_id);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/iot/groups/:group_id/devices',
      operationId: 'iotAddGroupDevices',
      tag: TAG,
      summary: 'Add devices by device_id; if any is unknown, none is added and the 404 names them',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: GroupParams,
      body: GroupDevicesBody,
      response: { 200: Type.Object({ added: Type.Array(Type.String()) }) },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        groups.addDevices(principal.customerId, params.group_id, body.device_ids),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/iot/groups/:group_id/devices/:device_id',
      operationId: 'iotRemoveGroupDevice',
      tag: TAG,
      summary: 'Take a device out of a group',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: GroupDeviceParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        await groups.removeDevice(principal.customerId, params.group_id, params.device_id);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/iot/devices/:device_id/commands',
      operationId: 'iotSendCommand',
      tag: TAG,
      summary:
        'Send a command to a connected device (QoS 1 on its commands topic), through any Fjord process',
      access: access('iot:write'),
      rateLimit: ['iot'],
      params: DeviceParams,
      body: CommandBody,
      response: { 202: CommandView },
      errors: [404, 409],
      handler: async ({ principal, params, body, reply }) => {
        reply.code(202);
        return iot.sendCommand(principal.customerId, params.device_id, body);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/credentials',
      operationId: 'iotConnectionInfo',
      tag: TAG,
      summary: 'How devices connect: broker host, ports, topic scheme and an example mosquitto_pub line',
      description:
        'Ports that are not served are null (MQTT over TLS and over WebSocket are not served yet).',
      access: access('iot:read'),
      rateLimit: ['iot'],
      response: {
        200: Type.Object({
          host: Type.String(),
          ports: Type.Object({
            mqtt: Type.Integer(),
            mqtts: Type.Union([Type.Integer(), Type.Null()]),
            websocket: Type.Union([Type.Integer(), Type.Null()]),
          }),
          protocol: Type.String(),
          client_id: Type.String(),
          topics: Type.Object({
            telemetry: Type.String(),
            attributes: Type.String(),
            commands: Type.String(),
            own_tree: Type.String(),
          }),
          example: Type.String(),
        }),
      },
      handler: async () => insights.connectionInfo(),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/iot/subscription',
      operationId: 'iotSubscription',
      tag: TAG,
      summary: 'The account’s plan with its IoT limits (null: unlimited) and devices in use',
      access: access('iot:read'),
      rateLimit: ['iot'],
      response: {
        200: Type.Object({
          plan: Type.String(),
          device_limit: Type.Union([Type.Integer(), Type.Null()]),
          devices: Type.Integer(),
          group_limit: Type.Union([Type.Integer(), Type.Null()]),
          rule_limit: Type.Union([Type.Integer(), Type.Null()]),
          telemetry_retention_days: Type.Union([Type.Integer(), Type.Null()]),
        }),
      },
      handler: async ({ principal }) => insights.subscription(principal.customerId),
    }),
  ];
}
