import { createHash } from 'node:crypto';

const RATE = 16_000;
const TONE_SECONDS = 0.2;
const GAP_SECONDS = 0.05;

/**
 * The reference speech renderer: one short sine tone per word of the text, its pitch taken from
 * the word's hash, as 16 kHz mono 16-bit PCM WAV. Deterministic, and plainly not a voice: it
 * exists so text-to-speech jobs run through the whole path without a model.
 */
export function toneSequence(text: string): Buffer {
  const words = text.split(/\s+/).filter(Boolean);
  const toneSamples = Math.round(TONE_SECONDS * RATE);
  const gapSamples = Math.round(GAP_SECONDS * RATE);
  const samples = Math.max(1, words.length) * (toneSamples + gapSamples);
  const wav = Buffer.alloc(44 + samples * 2);
  header(wav, samples);
  let offset = 44;
  for (const word of words) {
    const hz = 220 + (createHash('sha256').update(word).digest().readUInt16BE(0) % 660);
    for (let n = 0; n < toneSamples; n++) {
      // A short fade in and out keeps the tone from clicking.
      const envelope = Math.min(1, n / 160, (toneSamples - n) / 160);
      wav.writeInt16LE(Math.round(Math.sin((2 * Math.PI * hz * n) / RATE) * 12_000 * envelope), offset);
      offset += 2;
    }
    offset += gapSamples * 2;
  }
  return wav;
}

function header(b: Buffer, samples: number) {
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + samples * 2, 4);
  b.write('WAVEfmt ', 8, 'ascii');
  b.writeUInt32LE(16, 16); // fmt chunk size
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(RATE, 24);
  b.writeUInt32LE(RATE * 2, 28); // bytes per second
  b.writeUInt16LE(2, 32); // block align
  b.writeUInt16LE(16, 34); // bits per sample
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(samples * 2, 40);
}
