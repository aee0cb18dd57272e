import { describe, expect, it } from 'vitest';
import type { BucketRecord } from '../data-plane-contract.js';
import { policyOf } from './permissions.js';
import { MalformedPolicyError, parsePolicy } from './policy.js';
import { evaluatePolicy, isPublicPolicy, type PolicyRequest } from './policy-eval.js';

const doc = (...statements: object[]) => JSON.stringify({ Version: '2012-10-17', Statement: statements });
const reasonOf = (text: string) => {
  try {
    parsePolicy(text, 'photos');
    return 'ok';
  } catch (err) {
    expect(err).toBeInstanceOf(MalformedPolicyError);
    return (err as Error).message;
  }
};

const base = { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::photos/*' };

function req(over: Partial<PolicyRequest> & { ctx?: Record<string, string> } = {}): PolicyRequest {
  const { ctx, ...rest } = over;
  return {
    principal: { accessKeyId: 'AKONE', accountId: 'c1' },
    action: 's3:GetObject',
    resource: 'arn:aws:s3:::photos/a.jpg',
    context: Object.fromEntries(Object.entries(ctx ?? {}).map(([k, v]) => [k.toLowerCase(), [v]])),
    ...rest,
  };
}
const verdict = (text: string, r: PolicyRequest) => evaluatePolicy(parsePolicy(text, 'photos'), r);

describe('bucket policy validation', () => {
  it('accepts AWS’s policy language and refuses what it cannot mean, with the reason', () => {
    expect(reasonOf(doc(base))).toBe('ok');
    expect(reasonOf(JSON.stringify({ Statement: base }))).toBe('ok');
    expect(reasonOf('not json')).toMatch(/valid JSON/);
    expect(reasonOf(JSON.stringify({ Version: '2012-10-17' }))).toBe('Missing required field Statement');
    expect(reasonOf(JSON.stringify({ Version: '2020-01-01', Statement: [base] }))).toMatch(/version/);
    expect(reasonOf(doc({ ...base, Effect: 'Maybe' }))).toBe('Invalid effect: Maybe');
    const { Principal: _p, ...noPrincipal } = base;
    expect(reasonOf(doc(noPrincipal))).toBe('Missing required field Principal');
    const { Action: _a, ...noAction } = base;
    expect(reasonOf(doc(noAction))).toBe('Missing required field Action');
    expect(reasonOf(doc({ ...base, Action: 'ec2:RunInstances' }))).toBe('Policy has invalid action');
    expect(reasonOf(doc({ ...base, Resource: 'arn:aws:s3:::other/*' }))).toBe('Policy has invalid resource');
    expect(reasonOf(doc({ ...base, Principal: { Service: 'x' } }))).toBe('Invalid principal in policy');
    expect(reasonOf(doc({ ...base, Condition: { IpAddres: { 'aws:SourceIp': '1.2.3.4' } } }))).toMatch(
      /Invalid Condition type/,
    );
    expect(reasonOf(doc({ ...base, Condition: { IpAddress: { 'aws:SourceIp': '1.2.3.400/8' } } }))).toMatch(
      /Invalid IP address/,
    );
    expect(reasonOf(doc({ ...base, Condition: { StringEquals: { 'aws:Nope': 'x' } } }))).toMatch(
      /invalid condition key/,
    );
    expect(
      reasonOf(doc({ ...base, Condition: { DateLessThan: { 'aws:CurrentTime': 'tomorrow' } } })),
    ).toMatch(/Invalid date/);
    expect(reasonOf(doc({ ...base, Extra: 1 }))).toBe('Unknown field Extra');
    expect(reasonOf(doc({ ...base, Condition: { StringEquals: { 'aws:SourceVpc': 'vpc-1' } } }))).toMatch(
      /invalid condition key/,
    );
    expect(
      reasonOf(doc({ ...base, Condition: { StringEquals: { 's3:ExistingObjectTag/team': 'a' } } })),
    ).toBe('ok');
    expect(reasonOf(doc({ ...base, Resource: 'arn:aws:s3:::pho*' }))).toBe('ok');
    expect(reasonOf(doc({ ...base, NotPrincipal: { AWS: 'AKONE' }, Principal: undefined }))).toMatch(
      /NotPrincipal is supported only with Effect Deny/,
    );
  });
});

describe('bucket policy evaluation', () => {
  it('matches principals, wildcard actions and resource ARNs; an explicit Deny wins', () => {
    const p = doc(
      { ...base, Principal: { AWS: ['AKONE'] }, Action: 's3:Get*' },
      { Effect: 'Deny', Principal: '*', Action: 's3:*', Resource: 'arn:aws:s3:::photos/secret/*' },
    );
    expect(verdict(p, req())).toBe('allow');
    expect(verdict(p, req({ action: 's3:getobjectversion' }))).toBe('allow');
    expect(verdict(p, req({ action: 's3:PutObject' }))).toBe('none');
    expect(verdict(p, req({ principal: { accessKeyId: 'AKTWO', accountId: 'c2' } }))).toBe('none');
    expect(verdict(p, req({ principal: null }))).toBe('none');
    expect(verdict(p, req({ resource: 'arn:aws:s3:::photos/secret/x' }))).toBe('deny');
    const account = doc({ ...base, Principal: { AWS: 'arn:aws:iam::c2:root' } });
    expect(verdict(account, req({ principal: { accessKeyId: 'AKTWO', accountId: 'c2' } }))).toBe('allow');
    const notOne = { ...base, Effect: 'Deny', NotPrincipal: { AWS: 'AKONE' }, Principal: undefined };
    expect(verdict(doc(notOne), req())).toBe('none');
    expect(verdict(doc(notOne), req({ principal: { accessKeyId: 'AKTWO', accountId: 'c2' } }))).toBe('deny');
    expect(verdict(doc({ ...base, NotResource: 'arn:aws:s3:::photos/a*', Resource: undefined }), req())).toBe(
      'none',
    );
  });

  it('applies IP, string, date, bool and s3:prefix conditions (negated ones hold when the key is absent)', () => {
    const ip = doc({
      ...base,
      Condition: { IpAddress: { 'aws:SourceIp': ['10.0.0.0/8', '2001:db8::/32'] } },
    });
    expect(verdict(ip, req({ ctx: { 'aws:SourceIp': '10.1.2.3' } }))).toBe('allow');
    expect(verdict(ip, req({ ctx: { 'aws:SourceIp': '2001:db8::1' } }))).toBe('allow');
    expect(verdict(ip, req({ ctx: { 'aws:SourceIp': '192.168.0.1' } }))).toBe('none');
    const notIp = doc({
      ...base,
      Effect: 'Deny',
      Condition: { NotIpAddress: { 'aws:SourceIp': '10.0.0.0/8' } },
    });
    expect(verdict(notIp, req({ ctx: { 'aws:SourceIp': '127.0.0.1' } }))).toBe('deny');
    expect(verdict(notIp, req({ ctx: { 'aws:SourceIp': '10.0.0.1' } }))).toBe('none');

    const prefix = doc({
      ...base,
      Action: 's3:ListBucket',
      Resource: 'arn:aws:s3:::photos',
      Condition: { StringLike: { 's3:prefix': ['home/*', ''] } },
    });
    const list = { action: 's3:ListBucket', resource: 'arn:aws:s3:::photos' };
    expect(verdict(prefix, req({ ...list, ctx: { 's3:prefix': 'home/ann/' } }))).toBe('allow');
    expect(verdict(prefix, req({ ...list, ctx: { 's3:prefix': '' } }))).toBe('allow');
    expect(verdict(prefix, req({ ...list, ctx: { 's3:prefix': 'etc/' } }))).toBe('none');
    const notLike = doc({ ...base, Condition: { StringNotLike: { 'aws:UserAgent': '*curl*' } } });
    expect(verdict(notLike, req({ ctx: { 'aws:UserAgent': 'curl/8' } }))).toBe('none');
    expect(verdict(notLike, req())).toBe('allow');
    const equals = doc({ ...base, Condition: { StringEqualsIgnoreCase: { 's3:x-amz-acl': 'PRIVATE' } } });
    expect(verdict(equals, req({ ctx: { 's3:x-amz-acl': 'private' } }))).toBe('allow');

    const tls = doc({ ...base, Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } });
    expect(verdict(tls, req({ ctx: { 'aws:SecureTransport': 'false' } }))).toBe('deny');
    expect(verdict(tls, req({ ctx: { 'aws:SecureTransport': 'true' } }))).toBe('none');

    const until = doc({
      ...base,
      Condition: { DateLessThan: { 'aws:CurrentTime': '2030-01-01T00:00:00Z' } },
    });
    expect(verdict(until, req({ ctx: { 'aws:CurrentTime': '2029-12-31T23:59:59Z' } }))).toBe('allow');
    expect(verdict(until, req({ ctx: { 'aws:CurrentTime': '2030-01-01T00:00:01Z' } }))).toBe('none');
    const after = doc({ ...base, Condition: { DateGreaterThan: { 'aws:EpochTime': '1700000000' } } });
    expect(verdict(after, req({ ctx: { 'aws:EpochTime': '1800000000' } }))).toBe('allow');
    const ifExists = doc({ ...base, Condition: { StringEqualsIfExists: { 's3:x-amz-acl': 'private' } } });
    expect(verdict(ifExists, req())).toBe('allow');
    const isNull = doc({ ...base, Condition: { Null: { 's3:x-amz-acl': 'true' } } });
    expect(verdict(isNull, req())).toBe('allow');
    expect(verdict(isNull, req({ ctx: { 's3:x-amz-acl': 'private' } }))).toBe('none');
  });

  it('calls a policy public when it allows everyone without an IP or account condition', () => {
    const pub = (s: object) => isPublicPolicy(parsePolicy(doc(s), 'photos'));
    expect(pub(base)).toBe(true);
    expect(pub({ ...base, Principal: { AWS: 'c2' } })).toBe(false);
    expect(pub({ ...base, Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } } })).toBe(false);
    expect(pub({ ...base, Condition: { IpAddress: { 'aws:SourceIp': '0.0.0.0/0' } } })).toBe(true);
    expect(pub({ ...base, Effect: 'Deny' })).toBe(false);
  });
});

describe('a stored policy Fjord can no longer read', () => {
  it('fails closed: every principal but the bucket’s owner is denied', () => {
    // Allow with NotPrincipal was accepted by earlier versions and is refused now.
    const bucket = {
      name: 'photos',
      customerId: 'c1',
      policy: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', NotPrincipal: { AWS: 'c9' }, Action: 's3:*', Resource: 'arn:aws:s3:::photos/*' },
        ],
      }),
    } as BucketRecord;
    const policy = policyOf(bucket)!;
    const ask = (principal: { accessKeyId: string; accountId: string } | null) =>
      evaluatePolicy(policy, {
        principal,
        action: 's3:GetObject',
        resource: 'arn:aws:s3:::photos/a',
        context: {},
      });
    expect(ask({ accessKeyId: 'AKOTHER', accountId: 'c2' })).toBe('deny');
    expect(ask(null)).toBe('deny');
    expect(ask({ accessKeyId: 'AKOWNER', accountId: 'c1' })).toBe('none');
  });
});
