import { useQuery } from '@tanstack/preact-query';
import { must } from '../api.js';
import { useApi } from '../context.js';

/**
 * Objects are reached over Fjord's S3 endpoint (another port, signed with SigV4): this panel
 * says where, for the bucket keys below. Browsing and uploading from the page itself is not
 * built yet.
 */
export function ObjectBrowser({ bucket }: { bucket: string }) {
  const api = useApi();
  const creds = useQuery({
    queryKey: ['storage', 'credentials'],
    queryFn: async () => (await must(api.GET('/v1/storage/credentials'))) as Record<string, unknown>,
  });
  const endpoint = String(creds.data?.['endpoint'] ?? creds.data?.['endpoint_url'] ?? 'the S3 endpoint');
  return (
    <p>
      Reach this bucket’s objects with any S3 client at <code>{endpoint}</code>, bucket <code>{bucket}</code>,
      with a bucket key (below) or your account’s storage key.
    </p>
  );
}
