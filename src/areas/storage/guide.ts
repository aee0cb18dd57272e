import { SIGNING_REGION, STORAGE_REGION } from './catalogue.js';

export const LIST_PAGE_SIZE = 1000;
export const MULTIPART_MIN_PART_BYTES = 5 * 1024 ** 2;

/**
 * `GET /storage/s3`: how to reach the S3 data plane, with configurations for the clients people
 * use, filled in with this deployment's endpoint. Each example is run by test/e2e against a
 * real client, so they stay working.
 */
export function s3Guide(
  endpoint: string,
  acceptedRegions: readonly string[],
  baseDomain: string | null,
  limits: { maxUploadBytes: number | null; maxConnectionsPerKey: number | null },
) {
  const url = new URL(endpoint);
  const hostPort = url.host;
  const https = url.protocol === 'https:';
  // Virtual-host addressing needs a wildcard DNS name: only under FJORD_S3_BASE_DOMAIN.
  const virtualHost = baseDomain
    ? `${url.protocol}//<bucket>.${baseDomain}${url.port ? `:${url.port}` : ''}/<key>`
    : null;
  const examples = [
    {
      client: 'aws-cli',
      title: 'AWS CLI: ~/.aws/config and ~/.aws/credentials, then commands',
      language: 'shell',
      code: [
        '# ~/.aws/credentials',
        '[fjord]',
        'aws_access_key_id = <ACCESS_KEY>',
        'aws_secret_access_key = <SECRET_KEY>',
        '',
        '# ~/.aws/config — signature_version = s3v4 makes `aws s3 presign` sign with SigV4 (aws-cli 2.9 and older default to SigV2 there)',
        '[profile fjord]',
        `region = ${SIGNING_REGION}`,
        's3 =',
        '    signature_version = s3v4',
        '    addressing_style = path',
        '',
        `aws --profile fjord --endpoint-url ${endpoint} s3 ls`,
        `aws --profile fjord --endpoint-url ${endpoint} s3 cp ./photo.jpg s3://my-bucket/photos/photo.jpg`,
        `aws --profile fjord --endpoint-url ${endpoint} s3 sync ./site s3://my-bucket/site`,
        `aws --profile fjord --endpoint-url ${endpoint} s3 presign s3://my-bucket/photos/photo.jpg --expires-in 3600`,
      ].join('\n'),
    },
    {
      client: 's3cmd',
      title: 's3cmd: ~/.s3cfg, then commands',
      language: 'ini',
      code: [
        '# ~/.s3cfg',
        '[default]',
        'access_key = <ACCESS_KEY>',
        'secret_key = <SECRET_KEY>',
        `host_base = ${hostPort}`,
        `host_bucket = ${hostPort}`,
        `bucket_location = ${SIGNING_REGION}`,
        `use_https = ${https ? 'True' : 'False'}`,
        'signature_v2 = False',
        '',
        '# s3cmd ls s3://my-bucket',
        '# s3cmd put ./photo.jpg s3://my-bucket/photos/photo.jpg',
        '# s3cmd get s3://my-bucket/photos/photo.jpg ./copy.jpg',
      ].join('\n'),
    },
    {
      client: 'rclone',
      title: 'rclone: ~/.config/rclone/rclone.conf, then commands',
      language: 'ini',
      code: [
        '[fjord]',
        'type = s3',
        'provider = Other',
        'access_key_id = <ACCESS_KEY>',
        'secret_access_key = <SECRET_KEY>',
        `endpoint = ${endpoint}`,
        `region = ${SIGNING_REGION}`,
        'force_path_style = true',
        '',
        '# rclone ls fjord:my-bucket',
        '# rclone copy ./photos fjord:my-bucket/photos',
      ].join('\n'),
    },
    {
      client: 'aws-sdk-js',
      title: 'AWS SDK for JavaScript v3 (@aws-sdk/client-s3)',
      language: 'javascript',
      code: [
        "import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';",
        '',
        'const s3 = new S3Client({',
        `  endpoint: '${endpoint}',`,
        `  region: '${SIGNING_REGION}',`,
        '  forcePathStyle: true,',
        '  credentials: {',
        '    accessKeyId: process.env.FJORD_S3_ACCESS_KEY,',
        '    secretAccessKey: process.env.FJORD_S3_SECRET_KEY,',
        '  },',
        '});',
        '',
        "await s3.send(new PutObjectCommand({ Bucket: 'my-bucket', Key: 'hello.txt', Body: 'Hello' }));",
        "const res = await s3.send(new GetObjectCommand({ Bucket: 'my-bucket', Key: 'hello.txt' }));",
        'console.log(await res.Body.transformToString());',
      ].join('\n'),
    },
  ];
  return {
    endpoint,
    region: SIGNING_REGION,
    accepted_signing_regions: [...acceptedRegions],
    storage_region: STORAGE_REGION,
    signature_version:
      'AWS Signature Version 4 (Authorization header, presigned URLs up to 7 days, aws-chunked uploads)',
    addressing: {
      path_style: `${endpoint}/<bucket>/<key>`,
      virtual_host_style: virtualHost,
    },
    credentials:
      'The access_key and secret_key returned when a bucket (POST /v1/storage/buckets), a bucket key (POST /v1/storage/buckets/{bucket_name}/keys) or an account key (POST /v1/storage/keys) is created.',
    limits: {
      max_upload_bytes: limits.maxUploadBytes,
      max_connections_per_key: limits.maxConnectionsPerKey,
      list_page_size: LIST_PAGE_SIZE,
      multipart_min_part_bytes: MULTIPART_MIN_PART_BYTES,
    },
    examples,
  };
}
