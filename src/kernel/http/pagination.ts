import { Type } from '@sinclair/typebox';

/**
 * Page-number pagination, as the spec's lists use it (`page` with `page_size` or `per_page`, and
 * `total` in the answer) and as the Hetzner Cloud API does: pages start at 1, the size has a
 * default and a maximum, and a page past the end is an empty list, not an error.
 */
export type PageSizeParam = 'per_page' | 'page_size';

export function pageQuery(sizeParam: PageSizeParam = 'per_page', defaultSize = 50, maxSize = 200) {
  return Type.Object({
    page: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
    ),
    [sizeParam]: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: maxSize,
        default: defaultSize,
        description: `Items per page (at most ${maxSize})`,
      }),
    ),
  });
}

export interface PageRequest {
  page: number;
  size: number;
  limit: number;
  offset: number;
}

/** Reads `page` and the size parameter from a validated query. */
export function pageOf(
  query: Record<string, unknown>,
  sizeParam: PageSizeParam = 'per_page',
  defaultSize = 50,
): PageRequest {
  const page = typeof query['page'] === 'number' ? query['page'] : 1;
  const size = typeof query[sizeParam] === 'number' ? (query[sizeParam] as number) : defaultSize;
  return { page, size, limit: size, offset: (page - 1) * size };
}
