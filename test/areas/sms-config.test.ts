import { describe, expect, it } from 'vitest';
import { type ConfigError, loadConfig } from '../../src/config/config.js';

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
};

describe('SMS configuration', () => {
  it('defaults to the sandbox SMSC, and to SMPP when an SMSC is given', () => {
    expect(loadConfig({}).sms).toEqual({
      driver: 'sandbox',
      smppUrl: null,
      smppSystemType: '',
      smppWindow: 10,
      smppEnquireLinkSeconds: 30,
      sharedNumber: '+4759440000',
      currency: 'NOK',
      sandboxDeliverySeconds: 3,
      sandboxFailNumbers: [],
    });
    const c = loadConfig({ FJORD_SMPP_URL: 'smpp://u:p@smsc.example:2775', FJORD_SMS_CURRENCY: 'EUR' });
    expect(c.sms).toMatchObject({ driver: 'smpp', smppUrl: 'smpp://u:p@smsc.example:2775', currency: 'EUR' });
    expect(loadConfig({ FJORD_SMPP_URL: 'smpp://u:p@h:1', FJORD_SMS_DRIVER: 'sandbox' }).sms.driver).toBe(
      'sandbox',
    );
  });

  it('refuses bad values, and never shows the SMSC password', () => {
    expect(problems({ FJORD_SMS_DRIVER: 'smpp' })[0]).toMatch(/needs FJORD_SMPP_URL/);
    const bad = problems({
      FJORD_SMPP_URL: 'http://u:hunter2@h:1',
      FJORD_SMS_CURRENCY: 'GBP',
      FJORD_SMS_SANDBOX_FAIL_NUMBERS: '+4791234567,12345',
      FJORD_SMPP_WINDOW: '0',
      FJORD_SMS_SHARED_NUMBER: '4759440000',
    });
    expect(bad).toHaveLength(5);
    expect(bad.join('\n')).not.toContain('hunter2');
  });
});
