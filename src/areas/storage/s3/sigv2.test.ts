import { describe, expect, it } from 'vitest';
import { stringsToSign, verifyV2 } from './sigv2.js';
import type { SignedRequest } from './sigv4.js';

/**
 * Signature Version 2. The first block replays the examples of AWS's S3 developer guide
 * ("Signing and authenticating REST requests"): their StringToSign and signature must come out
 * exactly. The examples' signatures were computed for the bucket `johnsmith` (later editions of
 * the guide renamed the bucket in the text but kept the signatures).
 */
const EXAMPLE_ID = 'AKIAIOSFODNN7EXAMPLE';
const EXAMPLE_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

function request(method: string, url: string, headers: [string, string][]): SignedRequest {
  const lower: Record<string, string> = {};
  for (const [k, v] of headers) {
    const n = k.toLowerCase();
    lower[n] = lower[n] === undefined ? v : `${lower[n]}, ${v}`;
  }
  return { method, url, rawHeaders: headers.flat(), headers: lower };
}

const headerCred = (signature: string, date: string) => ({
  kind: 'header' as const,
  accessKeyId: EXAMPLE_ID,
  signature,
  dateText: date,
  expires: null,
});

describe('AWS’s published Signature Version 2 examples', () => {
  const cases: {
    name: string;
    req: SignedRequest;
    bucket: string | null;
    sts: string;
    sig: string;
  }[] = [
    {
      name: 'Object GET',
      req: request('GET', '/photos/puppy.jpg', [
        ['Host', 'johnsmith.s3.amazonaws.com'],
        ['Date', 'Tue, 27 Mar 2007 19:36:42 +0000'],
      ]),
      bucket: 'johnsmith',
      sts: 'GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg',
      sig: 'bWq2s1WEIj+Ydj0vQ697zp+IXMU=',
    },
    {
      name: 'Object PUT',
      req: request('PUT', '/photos/puppy.jpg', [
        ['Content-Type', 'image/jpeg'],
        ['Content-Length', '94328'],
        ['Host', 'johnsmith.s3.amazonaws.com'],
        ['Date', 'Tue, 27 Mar 2007 21:15:45 +0000'],
      ]),
      bucket: 'johnsmith',
      sts: 'PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n/johnsmith/photos/puppy.jpg',
      sig: 'MyyxeRY7whkBe+bq8fHCL/2kKUg=',
    },
    {
      name: 'List',
      req: request('GET', '/?prefix=photos&max-keys=50&marker=puppy', [
        ['User-Agent', 'Mozilla/5.0'],
        ['Host', 'johnsmith.s3.amazonaws.com'],
        ['Date', 'Tue, 27 Mar 2007 19:42:41 +0000'],
      ]),
      bucket: 'johnsmith',
      sts: 'GET\n\n\nTue, 27 Mar 2007 19:42:41 +0000\n/johnsmith/',
      sig: 'htDYFYduRNen8P9ZfE/s9SuKy0U=',
    },
    {
      name: 'Fetch (acl sub-resource)',
      req: request('GET', '/?acl', [
        ['Host', 'johnsmith.s3.amazonaws.com'],
        ['Date', 'Tue, 27 Mar 2007 19:44:46 +0000'],
      ]),
      bucket: 'johnsmith',
      sts: 'GET\n\n\nTue, 27 Mar 2007 19:44:46 +0000\n/johnsmith/?acl',
      sig: 'c2WLPFtWHVgbEmeEG93a4cG37dM=',
    },
    {
      name: 'Upload (x-amz headers sorted, lower-cased, joined)',
      req: request('PUT', '/db-backup.dat.gz', [
        ['User-Agent', 'curl/7.15.5'],
        ['Host', 'static.johnsmith.net:8080'],
        ['Date', 'Tue, 27 Mar 2007 21:06:08 +0000'],
        ['x-amz-acl', 'public-read'],
        ['content-type', 'application/x-download'],
        ['Content-MD5', '4gJE4saaMU4BqNR0kLY+lw=='],
        ['X-Amz-Meta-ReviewedBy', 'joe@johnsmith.net'],
        ['X-Amz-Meta-ReviewedBy', 'jane@johnsmith.net'],
        ['X-Amz-Meta-FileChecksum', '0x02661779'],
        ['X-Amz-Meta-ChecksumAlgorithm', 'crc32'],
        ['Content-Disposition', 'attachment; filename=database.dat'],
        ['Content-Encoding', 'gzip'],
        ['Content-Length', '5913339'],
      ]),
      bucket: 'static.johnsmith.net',
      sts:
        'PUT\n4gJE4saaMU4BqNR0kLY+lw==\napplication/x-download\nTue, 27 Mar 2007 21:06:08 +0000\n' +
        'x-amz-acl:public-read\nx-amz-meta-checksumalgorithm:crc32\nx-amz-meta-filechecksum:0x02661779\n' +
        'x-amz-meta-reviewedby:joe@johnsmith.net,jane@johnsmith.net\n/static.johnsmith.net/db-backup.dat.gz',
      sig: 'ilyl83RwaSoYIEdixDQcA4OnAnc=',
    },
    {
      name: 'List all my buckets',
      req: request('GET', '/', [
        ['Host', 's3.amazonaws.com'],
        ['Date', 'Wed, 28 Mar 2007 01:29:59 +0000'],
      ]),
      bucket: null,
      sts: 'GET\n\n\nWed, 28 Mar 2007 01:29:59 +0000\n/',
      sig: 'qGdzdERIC03wnaRNKh6OqZehG9s=',
    },
    {
      name: 'Unicode keys (the path taken literally)',
      req: request('GET', '/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re', [
        ['Host', 's3.amazonaws.com'],
        ['Date', 'Wed, 28 Mar 2007 01:49:49 +0000'],
      ]),
      bucket: null,
      sts: 'GET\n\n\nWed, 28 Mar 2007 01:49:49 +0000\n/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re',
      sig: 'DNEZGsoieTZ92F3bUfSPQcbGmlM=',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const date = c.req.headers['date'] as string;
      expect(stringsToSign(c.req, headerCred(c.sig, date), c.bucket)[0]).toBe(c.sts);
      expect(() => verifyV2(c.req, headerCred(c.sig, date), EXAMPLE_SECRET, c.bucket)).not.toThrow();
      const bad = headerCred(`${c.sig.slice(0, -2)}A=`, date);
      expect(() => verifyV2(c.req, bad, EXAMPLE_SECRET, c.bucket)).toThrow(/does not match/);
    });
  }

  it('Delete with x-amz-date: the guide’s form (date slot) and the clients’ form (header)', () => {
    const req = request('DELETE', '/johnsmith/photos/puppy.jpg', [
      ['User-Agent', 'dotnet'],
      ['Host', 's3.amazonaws.com'],
      ['Date', 'Tue, 27 Mar 2007 21:20:27 +0000'],
      ['x-amz-date', 'Tue, 27 Mar 2007 21:20:26 +0000'],
    ]);
    const cred = headerCred('lx3byBScXR6KzyMaifNkardMwNk=', 'Tue, 27 Mar 2007 21:20:26 +0000');
    const all = stringsToSign(req, cred, null);
    expect(all).toContain('DELETE\n\n\nTue, 27 Mar 2007 21:20:26 +0000\n/johnsmith/photos/puppy.jpg');
    expect(all[0]).toBe(
      'DELETE\n\n\n\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n/johnsmith/photos/puppy.jpg',
    );
    expect(() => verifyV2(req, cred, EXAMPLE_SECRET, null)).not.toThrow();
  });

  it('Query string authentication', () => {
    const url = `/photos/puppy.jpg?AWSAccessKeyId=${EXAMPLE_ID}&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&Expires=1175139620`;
    const req = request('GET', url, [['Host', 'johnsmith.s3.amazonaws.com']]);
    const cred = {
      kind: 'query' as const,
      accessKeyId: EXAMPLE_ID,
      signature: 'NpgCjnDzrM+WFzoENXmpNDUsSn8=',
      dateText: null,
      expires: 1175139620,
    };
    expect(stringsToSign(req, cred, 'johnsmith')[0]).toBe('GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg');
    expect(() => verifyV2(req, cred, EXAMPLE_SECRET, 'johnsmith')).not.toThrow();
  });

  it('signs sub-resources sorted, with values, and leaves other parameters out', () => {
    const req = request(
      'GET',
      '/b/k?versionId=v1&response-content-type=text%2Fplain&prefix=x&uploadId=u%2B1&partNumber=2',
      [['Date', 'Tue, 27 Mar 2007 19:36:42 +0000']],
    );
    expect(stringsToSign(req, headerCred('x', 'd'), null)[0]).toBe(
      'GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/b/k?partNumber=2&response-content-type=text/plain&uploadId=u+1&versionId=v1',
    );
    // Clients that predate the newer sub-resources sign them as ordinary parameters.
    const late = request('GET', '/b?encryption', [['Date', 'Tue, 27 Mar 2007 19:36:42 +0000']]);
    const variants = stringsToSign(late, headerCred('x', 'd'), null);
    expect(variants[0]).toBe('GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/b?encryption');
    expect(variants).toContain('GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/b');
  });
});
