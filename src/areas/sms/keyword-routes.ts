import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { SmsKeywords } from './keywords.js';
import {
  Keyword,
  KeywordAvailability,
  KeywordIdParams,
  KeywordReleased,
  KeywordWordParams,
  NewKeywordBody,
  UpdateKeywordBody,
} from './schemas.js';

const TAG = 'SMS keywords';
const access = (scope: string): CustomerAccess => ({ kind: 'customer', services: ['sms'], scopes: [scope] });

export function keywordRoutes(keywords: SmsKeywords) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/sms/keywords',
      operationId: 'listSmsKeywords',
      tag: TAG,
      summary: 'List reserved keywords',
      access: access('sms-keywords:read'),
      response: { 200: Type.Array(Keyword) },
      handler: async ({ principal }) => keywords.list(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/sms/keywords',
      operationId: 'reserveSmsKeyword',
      tag: TAG,
      summary: 'Reserve a keyword on the shared number',
      description: 'Keywords are 2-20 letters and digits, case-insensitive, and shown in upper case.',
      access: access('sms-keywords:write'),
      body: NewKeywordBody,
      response: { 201: Keyword },
      errors: [409],
      handler: async ({ principal, body }) => keywords.reserve(principal.customerId, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/sms/keywords/check/:keyword',
      operationId: 'checkSmsKeyword',
      tag: TAG,
      summary: 'Check whether a keyword is available',
      access: access('sms-keywords:read'),
      params: KeywordWordParams,
      response: { 200: KeywordAvailability },
      handler: async ({ params }) => keywords.availability(params.keyword),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/sms/keywords/:keyword_id',
      operationId: 'getSmsKeyword',
      tag: TAG,
      summary: 'Get a keyword',
      access: access('sms-keywords:read'),
      params: KeywordIdParams,
      response: { 200: Keyword },
      errors: [404],
      handler: async ({ principal, params }) => keywords.get(principal.customerId, params.keyword_id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/sms/keywords/:keyword_id',
      operationId: 'updateSmsKeyword',
      tag: TAG,
      summary: 'Change a keyword’s settings (only the fields sent)',
      access: access('sms-keywords:write'),
      params: KeywordIdParams,
      body: UpdateKeywordBody,
      response: { 200: Keyword },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        keywords.update(principal.customerId, params.keyword_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/sms/keywords/:keyword_id',
      operationId: 'releaseSmsKeyword',
      tag: TAG,
      summary: 'Release a keyword (it becomes available to anyone)',
      access: access('sms-keywords:write'),
      params: KeywordIdParams,
      response: { 200: KeywordReleased },
      errors: [404],
      handler: async ({ principal, params }) => keywords.release(principal.customerId, params.keyword_id),
    }),
  ];
}
