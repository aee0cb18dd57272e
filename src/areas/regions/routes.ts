import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import { CURRENCIES, type RegionsService } from './service.js';

const TAG = 'Regions';
const access: CustomerAccess = {
  kind: 'customer',
  services: 'any',
  scopes: ['regions:read'],
  oidc: true,
  bearer: true,
};

const RegionStatus = Type.Union([
  Type.Literal('active'),
  Type.Literal('maintenance'),
  Type.Literal('deprecated'),
]);
const regionFields = {
  code: Type.String(),
  name: Type.String(),
  country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
  status: RegionStatus,
};
const Region = Type.Object(regionFields, { title: 'Region' });
const RegionDetail = Type.Object(
  { ...regionFields, available_services: Type.Array(Type.String()) },
  { title: 'RegionDetail' },
);
const RegionPricing = Type.Object(
  {
    region: Type.String(),
    currency: Type.String(),
    services: Type.Record(Type.String(), Type.Record(Type.String(), Type.Number()), {
      description: 'Keyed by service kind; each value maps a price item to its price in `currency`',
    }),
  },
  { title: 'RegionPricing' },
);
const RegionParams = Type.Object({ region_code: Type.String({ minLength: 1, maxLength: 64 }) });

export function regionRoutes(regions: RegionsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/regions',
      operationId: 'listRegions',
      tag: TAG,
      summary: 'List regions',
      access,
      response: { 200: Type.Object({ regions: Type.Array(Region), total: Type.Integer() }) },
      handler: async () => regions.list(),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/regions/:region_code',
      operationId: 'getRegion',
      tag: TAG,
      summary: 'Get a region with the services it offers',
      access,
      params: RegionParams,
      response: { 200: RegionDetail },
      errors: [404],
      handler: async ({ params }) => regions.get(params.region_code),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/regions/:region_code/pricing',
      operationId: 'getRegionPricing',
      tag: TAG,
      summary: 'Get the prices of a region',
      description: '`currency` selects NOK (default), SEK, DKK, EUR or USD.',
      access,
      params: RegionParams,
      query: Type.Object({
        currency: Type.Optional(
          Type.String({
            pattern: '^[A-Za-z]{3}$',
            description: `One of ${CURRENCIES.join(', ')} (any case)`,
          }),
        ),
      }),
      response: { 200: RegionPricing },
      errors: [404],
      handler: async ({ params, query }) => regions.pricing(params.region_code, query.currency),
    }),
  ];
}
