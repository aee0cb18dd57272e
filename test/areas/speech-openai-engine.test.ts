import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OpenAiCompatibleEngine } from '../../src/areas/speech/drivers/openai-compatible.js';
import { clipDir, speak } from '../helpers/speech.js';

/**
 * The openai-compatible engine against a small local server speaking
 * `POST /v1/audio/transcriptions` (verbose_json, word timestamps, OpenAI's layout).
 */
let server: Server;
let base: string;
let seen: { auth?: string; body: string }[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('latin1');
      seen.push({ auth: req.headers.authorization, body });
      if (req.url !== '/v1/audio/transcriptions' || !body.includes('RIFF')) {
        res.writeHead(400).end('{"error":"no file"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          language: 'english',
          duration: 2.1,
          text: 'Hello there. General news.',
          segments: [
            { id: 0, start: 0, end: 1, text: ' Hello there.', avg_logprob: -0.1 },
            { id: 1, start: 1.2, end: 2.1, text: ' General news.', avg_logprob: -0.3 },
          ],
          words: [
            { word: 'Hello', start: 0, end: 0.4 },
            { word: 'there', start: 0.5, end: 1 },
            { word: 'General', start: 1.2, end: 1.6 },
            { word: 'news', start: 1.7, end: 2.1 },
          ],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

it('sends the file with verbose_json and word timestamps, and maps the answer to segments', async () => {
  seen = [];
  const wav = speak(clipDir(), 'hello there', 'wav');
  const engine = new OpenAiCompatibleEngine(base, 'sk-test', 'whisper-1');
  const result = await engine.transcribe(wav, 'auto');
  expect(seen[0]!.auth).toBe('Bearer sk-test');
  expect(seen[0]!.body).toContain('verbose_json');
  expect(seen[0]!.body).toContain('timestamp_granularities[]');
  expect(seen[0]!.body).not.toContain('name="language"');
  expect(result.language).toBe('en');
  expect(result.segments.map((s) => s.text)).toEqual(['Hello there.', 'General news.']);
  expect(result.segments[1]!.words.map((w) => w.word)).toEqual(['General', 'news']);
  expect(result.segments[0]!.confidence).toBeCloseTo(Math.exp(-0.1), 3);
  await engine.transcribe(wav, 'de');
  expect(seen[1]!.body).toContain('name="language"');
});

it('fails with the server’s answer when it refuses', async () => {
  const engine = new OpenAiCompatibleEngine(`${base}/wrong`, undefined, 'whisper-1');
  await expect(engine.transcribe(speak(clipDir(), 'x', 'wav'), 'auto')).rejects.toThrow(/answered 400/);
});
