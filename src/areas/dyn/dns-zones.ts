import { AppError } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { DynZones } from './service.js';

/** Placeholder until the DNS area is present: dynamic DNS writes through it. */
export function dnsZonesFor(_kernel: Kernel, _services: Record<string, unknown>): DynZones {
  const missing = () => {
    throw new AppError('unavailable', 'dns_unavailable', 'Dynamic DNS needs the DNS area.');
  };
  return { ensurePlatformZone: missing, customerZoneContaining: missing, setAddresses: missing };
}
