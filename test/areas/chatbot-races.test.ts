import { afterAll, beforeAll, describe, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/** Chatbot limits under requests that arrive together: bots per customer and sources per bot. */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_LIMITS: JSON.stringify({ 'chatbot.sources_per_bot': 7 }) });
});
afterAll(() => t.close());

describe('chatbot limits under concurrency', () => {
  it('30 bot creates at once on the free plan make exactly 3 bots', async () => {
    const c = await t.customer();
    await expectLimitHolds({
      room: 3,
      attempts: 30,
      send: (i) => t.request('POST', '/v1/chatbot/bots', { key: c.pat, body: { name: `Race ${i}` } }),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });

  it('30 sources added at once fill a bot to exactly its limit', async () => {
    const c = await t.customer();
    const bot = await t.request('POST', '/v1/chatbot/bots', { key: c.pat, body: { name: 'Full' } });
    await expectLimitHolds({
      room: 7,
      attempts: 30,
      send: (i) =>
        t.request('POST', `/v1/chatbot/bots/${bot.body.id}/sources`, {
          key: c.pat,
          body: { kind: 'text', title: `Doc ${i}`, text: `Fact number ${i}.` },
        }),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});
