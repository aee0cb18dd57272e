/**
 * The routes of an app's volumes and their snapshots. Apart from routes.ts because volumes are a
 * resource of their own, served by AppVolumes.
 */
import { defineRoute } from '../../kernel/http/route.js';
import { BUCKET, read, TAG, write } from './routes-common.js';
import {
  AppParams,
  CreateVolumeBody,
  Deleted,
  SnapshotList,
  SnapshotView,
  VolumeList,
  VolumeParams,
  VolumeView,
} from './schemas.js';
import type { AppVolumes } from './volumes.js';

export function volumeRoutes(volumes: AppVolumes) {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/apps/:app_id/volumes',
      operationId: 'appsCreateVolume',
      tag: TAG,
      summary: 'Create a volume mounted into every instance of the app, optionally from a snapshot',
      access: write,
      rateLimit: BUCKET,
      params: AppParams,
      body: CreateVolumeBody,
      response: { 201: VolumeView },
      errors: [403, 404, 409, 503],
      handler: async ({ principal, params, body }) =>
        volumes.create(principal.customerId, params.app_id, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/apps/:app_id/volumes',
      operationId: 'appsVolumes',
      tag: TAG,
      summary: 'The app’s volumes',
      access: read,
      rateLimit: BUCKET,
      params: AppParams,
      response: { 200: VolumeList },
      errors: [404],
      handler: async ({ principal, params }) => volumes.list(principal.customerId, params.app_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/apps/:app_id/volumes/:volume_id',
      operationId: 'appsVolume',
      tag: TAG,
      summary: 'A volume, by id or name',
      access: read,
      rateLimit: BUCKET,
      params: VolumeParams,
      response: { 200: VolumeView },
      errors: [404],
      handler: async ({ principal, params }) =>
        volumes.get(principal.customerId, params.app_id, params.volume_id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/apps/:app_id/volumes/:volume_id',
      operationId: 'appsDeleteVolume',
      tag: TAG,
      summary: 'Delete a volume, its files and its snapshots (the app must not be running)',
      access: write,
      rateLimit: BUCKET,
      params: VolumeParams,
      response: { 200: Deleted },
      errors: [404, 409],
      handler: async ({ principal, params }) =>
        volumes.remove(principal.customerId, params.app_id, params.volume_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/apps/:app_id/volumes/:volume_id/snapshots',
      operationId: 'appsSnapshotVolume',
      tag: TAG,
      summary: 'Write a snapshot of the volume’s files into object storage',
      access: write,
      rateLimit: BUCKET,
      params: VolumeParams,
      response: { 201: SnapshotView },
      errors: [404],
      handler: async ({ principal, params }) =>
        volumes.snapshot(principal.customerId, params.app_id, params.volume_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/apps/:app_id/volumes/:volume_id/snapshots',
      operationId: 'appsVolumeSnapshots',
      tag: TAG,
      summary: 'The volume’s snapshots, newest first',
      access: read,
      rateLimit: BUCKET,
      params: VolumeParams,
      response: { 200: SnapshotList },
      errors: [404],
      handler: async ({ principal, params }) =>
        volumes.snapshots(principal.customerId, params.app_id, params.volume_id),
    }),
  ];
}
