/**
 * The words of the code message in each locale of the spec. `nb` (Bokmål) reads like `no`;
 * voice has no `nb` (the spec's voice list), which start refuses before a call is placed.
 */
export const LOCALES = ['en', 'no', 'nb', 'sv', 'da', 'fi'] as const;
export const VOICE_LOCALES = ['en', 'no', 'sv', 'da', 'fi'] as const;
export type Locale = (typeof LOCALES)[number];

interface Words {
  /** The SMS text and the e-mail body's first line. */
  text: (code: string, minutes: number) => string;
  subject: string;
  /** What the voice call says before reading the code, and between the two readings. */
  voiceIntro: string;
  voiceRepeat: string;
  voiceBye: string;
}

const norwegian: Words = {
  text: (code, minutes) => `Din bekreftelseskode er ${code}. Den er gyldig i ${minutes} min.`,
  subject: 'Din bekreftelseskode',
  voiceIntro: 'Din bekreftelseskode er',
  voiceRepeat: 'Jeg gjentar',
  voiceBye: 'Ha en fin dag.',
};

export const WORDS: Record<Locale, Words> = {
  en: {
    text: (code, minutes) => `Your verification code is ${code}. It is valid for ${minutes} min.`,
    subject: 'Your verification code',
    voiceIntro: 'Your verification code is',
    voiceRepeat: 'Once again',
    voiceBye: 'Goodbye.',
  },
  no: norwegian,
  nb: norwegian,
  sv: {
    text: (code, minutes) => `Din verifieringskod är ${code}. Den gäller i ${minutes} min.`,
    subject: 'Din verifieringskod',
    voiceIntro: 'Din verifieringskod är',
    voiceRepeat: 'Jag upprepar',
    voiceBye: 'Hej då.',
  },
  da: {
    text: (code, minutes) => `Din bekræftelseskode er ${code}. Den er gyldig i ${minutes} min.`,
    subject: 'Din bekræftelseskode',
    voiceIntro: 'Din bekræftelseskode er',
    voiceRepeat: 'Jeg gentager',
    voiceBye: 'Farvel.',
  },
  fi: {
    text: (code, minutes) => `Vahvistuskoodisi on ${code}. Se on voimassa ${minutes} min.`,
    subject: 'Vahvistuskoodisi',
    voiceIntro: 'Vahvistuskoodisi on',
    voiceRepeat: 'Toistan',
    voiceBye: 'Näkemiin.',
  },
};

/** TTLs are 60-900 s; the message states whole minutes, rounded down but never 0. */
export const minutesOf = (ttlSeconds: number) => Math.max(1, Math.floor(ttlSeconds / 60));

export const smsText = (locale: Locale, code: string, ttlSeconds: number) =>
  WORDS[locale].text(code, minutesOf(ttlSeconds));

/** The call script: the code is read digit by digit, twice. */
export function voiceScript(locale: Locale, code: string): string[] {
  const w = WORDS[locale];
  const digits = code.split('').join(', ');
  return [`${w.voiceIntro}: ${digits}.`, `${w.voiceRepeat}: ${digits}.`, w.voiceBye];
}

export function emailContent(locale: Locale, code: string, ttlSeconds: number) {
  const w = WORDS[locale];
  const line = w.text(code, minutesOf(ttlSeconds));
  return {
    subject: `${w.subject}: ${code}`,
    text: `${line}\n`,
    html: `<p>${line.replace(code, `<strong>${code}</strong>`)}</p>\n`,
  };
}
