import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../../kernel/auth/principal.js';
import { defineRoute } from '../../../kernel/http/route.js';
import type { IotInsights } from '../insights.js';
import { DeviceParams } from '../schemas.js';
import type { Datapoints } from './datapoints.js';
import type { Profiles } from './profiles.js';
import {
  Applied,
  ApplyParams,
  CreateDatapointBody,
  CreateProfileBody,
  Datapoint,
  DatapointParams,
  Health,
  PatchDatapointBody,
  PatchProfileBody,
  Profile,
  ProfileParams,
  Stats,
  Usage,
} from './schemas.js';

const TAG = 'IoT';
export const iotAccess = (scope: 'iot:read' | 'iot:write'): CustomerAccess => ({
  kind: 'customer',
  services: ['iot'],
  scopes: [scope],
  oidc: true,
  bearer: true,
});
const Empty = Type.Null({ description: 'No content' });

/** Datapoint definitions, profiles, device health, usage and statistics. */
export function iotCatalogueRoutes(datapoints: Datapoints, profiles: Profiles, insights: IotInsights) {
  const read = { tag: TAG, access: iotAccess('iot:read'), rateLimit: ['iot'] };
  const write = { tag: TAG, access: iotAccess('iot:write'), rateLimit: ['iot'] };
  return [
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/datapoints',
      operationId: 'iotListDatapoints',
      summary: 'Datapoint definitions, by key',
      response: { 200: Type.Object({ datapoints: Type.Array(Datapoint) }) },
      handler: async ({ principal }) => datapoints.list(principal.customerId),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      url: '/v1/iot/datapoints',
      operationId: 'iotCreateDatapoint',
      summary:
        'Define a telemetry key: name, unit, type, range and rounding; ingest checks points against it',
      body: CreateDatapointBody,
      response: { 201: Datapoint },
      errors: [403, 409],
      handler: async ({ principal, body, reply }) => {
        reply.code(201);
        return datapoints.create(principal.customerId, body);
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/datapoints/:datapoint_id',
      operationId: 'iotGetDatapoint',
      summary: 'A datapoint definition',
      params: DatapointParams,
      response: { 200: Datapoint },
      errors: [404],
      handler: async ({ principal, params }) => datapoints.get(principal.customerId, params.datapoint_id),
    }),
    defineRoute({
      ...write,
      method: 'PATCH',
      url: '/v1/iot/datapoints/:datapoint_id',
      operationId: 'iotUpdateDatapoint',
      summary: 'Change a datapoint definition (not its key); applies from the next point',
      params: DatapointParams,
      body: PatchDatapointBody,
      response: { 200: Datapoint },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        datapoints.update(principal.customerId, params.datapoint_id, body),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      url: '/v1/iot/datapoints/:datapoint_id',
      operationId: 'iotDeleteDatapoint',
      summary: 'Delete a datapoint definition (stored points stay; the key is no longer checked)',
      params: DatapointParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params, reply }) => {
        await datapoints.remove(principal.customerId, params.datapoint_id);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/profiles',
      operationId: 'iotListProfiles',
      summary: 'Device profiles, oldest first',
      response: { 200: Type.Object({ profiles: Type.Array(Profile) }) },
      handler: async ({ principal }) => profiles.list(principal.customerId),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      url: '/v1/iot/profiles',
      operationId: 'iotCreateProfile',
      summary: 'Create a device profile: device_type, default metadata and the datapoints its devices report',
      body: CreateProfileBody,
      response: { 201: Profile },
      errors: [403, 409],
      handler: async ({ principal, body, reply }) => {
        reply.code(201);
        return profiles.create(principal.customerId, body);
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/profiles/:profile_id',
      operationId: 'iotGetProfile',
      summary: 'A device profile',
      params: ProfileParams,
      response: { 200: Profile },
      errors: [404],
      handler: async ({ principal, params }) => profiles.get(principal.customerId, params.profile_id),
    }),
    defineRoute({
      ...write,
      method: 'PATCH',
      url: '/v1/iot/profiles/:profile_id',
      operationId: 'iotUpdateProfile',
      summary:
        'Change a device profile (devices it was applied to keep what they have until it is applied again)',
      params: ProfileParams,
      body: PatchProfileBody,
      response: { 200: Profile },
      errors: [404, 409],
      handler: async ({ principal, params, body }) =>
        profiles.update(principal.customerId, params.profile_id, body),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      url: '/v1/iot/profiles/:profile_id',
      operationId: 'iotDeleteProfile',
      summary: 'Delete a device profile (refused while alarm rules target it; devices keep their values)',
      params: ProfileParams,
      response: { 204: Empty },
      errors: [404, 409],
      handler: async ({ principal, params, reply }) => {
        await profiles.remove(principal.customerId, params.profile_id);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      ...write,
      method: 'POST',
      url: '/v1/iot/profiles/:profile_id/apply/:device_id',
      operationId: 'iotApplyProfile',
      summary: 'Apply a profile to a device: its device_type, and its metadata keys the device lacks',
      params: ApplyParams,
      response: { 200: Applied },
      errors: [404],
      handler: async ({ principal, params }) =>
        profiles.apply(principal.customerId, params.profile_id, params.device_id),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/devices/:device_id/health',
      operationId: 'iotDeviceHealth',
      summary:
        'A device’s health score from uptime, open alarms, connection stability and telemetry freshness',
      params: DeviceParams,
      response: { 200: Health },
      errors: [404],
      handler: async ({ principal, params }) => insights.health(principal.customerId, params.device_id),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/usage',
      operationId: 'iotUsage',
      summary: 'This month’s use: devices, messages, points stored and refused, notifications',
      response: { 200: Usage },
      handler: async ({ principal }) => insights.usage(principal.customerId),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      url: '/v1/iot/stats',
      operationId: 'iotStats',
      summary: 'Devices online and offline, the last 24 hours of traffic, open alarms and rules',
      response: { 200: Stats },
      handler: async ({ principal }) => insights.stats(principal.customerId),
    }),
  ];
}
