import { describe, expect, it } from 'vitest';
import { patternInWords } from './pattern-words.js';

describe('patternInWords', () => {
  it.each([
    [
      '^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$',
      'must be 3-63 characters: lower-case letters, digits and hyphens, starting and ending with a lower-case letter or a digit',
    ],
    ['^[A-Za-z0-9_]+$', 'must be letters, digits and underscores only'],
    [
      '^[a-z][a-z0-9-]*$',
      'must be lower-case letters, digits and hyphens, starting with a lower-case letter',
    ],
    ['^[A-Z]{2}$', 'must be exactly 2 characters: upper-case letters only'],
    ['\\S', 'must not be blank'],
    ['^https://', 'must be an https:// URL'],
  ])('says %s in words', (pattern, words) => {
    expect(patternInWords(pattern)).toBe(words);
  });

  it('gives up on what it cannot say exactly', () => {
    expect(patternInWords('^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$')).toBeNull();
    expect(patternInWords('^[^a-z]+$')).toBeNull();
    expect(patternInWords('abc')).toBeNull();
  });
});
