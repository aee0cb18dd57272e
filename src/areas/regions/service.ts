import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { AppError, kernelErrors } from '../../kernel/errors.js';
import { deepFreeze } from '../../kernel/immutable.js';
import shippedCatalogue from './catalogue.json' with { type: 'json' };

export const CURRENCIES = ['NOK', 'SEK', 'DKK', 'EUR', 'USD'] as const;
export type Currency = (typeof CURRENCIES)[number];

const PriceByCurrency = Type.Object(
  Object.fromEntries(CURRENCIES.map((c) => [c, Type.Number({ minimum: 0 })])),
);
const CatalogueFile = Type.Object({
  currencies: Type.Array(Type.String()),
  default_currency: Type.Union(CURRENCIES.map((c) => Type.Literal(c))),
  regions: Type.Array(
    Type.Object({
      code: Type.String({ pattern: '^[a-z][a-z0-9-]*$' }),
      name: Type.String(),
      country: Type.String({ pattern: '^[A-Z]{2}$' }),
      status: Type.Union([Type.Literal('active'), Type.Literal('maintenance'), Type.Literal('deprecated')]),
      available_services: Type.Array(Type.String()),
      prices: Type.Record(Type.String(), Type.Record(Type.String(), PriceByCurrency)),
    }),
  ),
});
type Catalogue = Static<typeof CatalogueFile>;

export const regionErrors = {
  notFound: (code: string) => kernelErrors.notFound(`Region "${code}"`),
  unsupportedCurrency: (c: string) =>
    new AppError(
      'invalid',
      'unsupported_currency',
      `Currency "${c}" is not offered; use one of ${CURRENCIES.join(', ')}.`,
      {
        errors: [{ path: '/query/currency', message: `must be one of ${CURRENCIES.join(', ')}` }],
      },
    ),
};

/** The region catalogue, read from a data file and checked once at start. */
export class RegionsService {
  private readonly catalogue: Catalogue;
  private readonly listing: {
    regions: { code: string; name: string; country: string; status: string }[];
    total: number;
  };

  /** `data`: the catalogue shipped with Fjord (bundled with the code), or another one to check. */
  constructor(data: unknown = shippedCatalogue, name = 'catalogue.json') {
    if (!Value.Check(CatalogueFile, data)) {
      const first = [...Value.Errors(CatalogueFile, data)][0];
      throw new Error(`region catalogue ${name}: ${first?.path} ${first?.message}`);
    }
    this.catalogue = data;
    // The catalogue never changes while running, so the list answer is built once (and frozen:
    // its JSON is then written once too).
    const regions = data.regions.map(({ code, name, country, status }) => ({ code, name, country, status }));
    this.listing = deepFreeze({ regions, total: regions.length });
  }

  get defaultCurrency(): Currency {
    return this.catalogue.default_currency;
  }

  list() {
    return this.listing;
  }

  get(code: string) {
    const r = this.find(code);
    return {
      code: r.code,
      name: r.name,
      country: r.country,
      status: r.status,
      available_services: r.available_services,
    };
  }

  /** True when the region exists, is not deprecated and offers the service kind. */
  offers(code: string, serviceKind: string): boolean {
    const r = this.catalogue.regions.find((x) => x.code === code.toLowerCase());
    return !!r && r.status !== 'deprecated' && r.available_services.includes(serviceKind);
  }

  pricing(code: string, requestedCurrency?: string) {
    const r = this.find(code);
    const currency = (requestedCurrency?.toUpperCase() ?? this.defaultCurrency) as Currency;
    if (!CURRENCIES.includes(currency)) throw regionErrors.unsupportedCurrency(requestedCurrency!);
    const services: Record<string, Record<string, number>> = {};
    for (const [kind, items] of Object.entries(r.prices)) {
      services[kind] = Object.fromEntries(
        Object.entries(items).map(([item, byCurrency]) => [item, byCurrency[currency]!]),
      );
    }
    return { region: r.code, currency, services };
  }

  private find(code: string) {
    const r = this.catalogue.regions.find((x) => x.code === code.toLowerCase());
    if (!r) throw regionErrors.notFound(code);
    return r;
  }
}
