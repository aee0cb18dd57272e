/** Owner of the internal buckets in `storage_usage`: no customer, so no customer's usage counts them.
 * A leaf of its own: the internal bucket and the upload grants it signs both name it. */
export const INTERNAL_OWNER = 'fjord-internal';
