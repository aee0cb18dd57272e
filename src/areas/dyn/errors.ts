import { AppError, kernelErrors } from '../../kernel/errors.js';

/** The dynamic DNS area's errors (the DynDNS2 endpoint answers its own codes instead). */
export const dynErrors = {
  nameInUse: (hostname: string, why: string) =>
    new AppError('conflict', 'name_in_use', `${hostname} cannot be used for dynamic DNS: ${why}.`),
  hostnameNotFound: () => kernelErrors.notFound('Hostname'),
  credentialNotFound: () => kernelErrors.notFound('Credential'),
  invalidHostname: (hostname: string, zone: string) =>
    kernelErrors.invalid(
      `"${hostname}" must be one label under ${zone} (e.g. myhome.${zone}) or a name inside one of your Fjord DNS zones.`,
      [{ path: '/body/hostname', message: 'not a hostname this account can use' }],
    ),
  hostnameTaken: (hostname: string) =>
    new AppError('conflict', 'hostname_taken', `${hostname} is already in use.`),
  quota: (what: string, limit: number, plan: string) =>
    new AppError('forbidden', 'quota_exceeded', `The ${plan} plan allows ${limit} ${what}.`),
};
