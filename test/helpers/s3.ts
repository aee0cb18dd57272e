import { S3Client } from '@aws-sdk/client-s3';

/** An AWS SDK client for a bucket as the storage API created it (its endpoint and key). */
export function s3ClientFor(
  bucket: { endpoint: string; access_key: string; secret_key: string },
  endpoint?: string,
) {
  return new S3Client({
    endpoint: endpoint ?? bucket.endpoint,
    region: 'eu-north-1',
    forcePathStyle: true,
    credentials: { accessKeyId: bucket.access_key, secretAccessKey: bucket.secret_key },
    maxAttempts: 1,
  });
}
