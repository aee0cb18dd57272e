import type { IpService } from '../ip/service.js';
import { BuiltinIpReputation, type IpReputation, type IpRisk, levelOf } from './ip-risk.js';

/**
 * `ip_risk` from Fjord's IP-intelligence area, when it is part of the build: the address's abuse
 * reports give the score, and the operator's lists raise it (a botnet or Tor exit more than a VPN
 * or a data centre, as fraud teams weigh them). A special-purpose address is judged as the builtin
 * reputation judges it: it cannot be an end user's, whatever lists say.
 */
export class IntelligenceIpReputation implements IpReputation {
  private readonly builtin = new BuiltinIpReputation();

  constructor(private readonly intelligence: Pick<IpService, 'reputation'>) {}

  async assess(ip: string): Promise<IpRisk> {
    const base = await this.builtin.assess(ip);
    if (base.is_private) return { ...base, source: SOURCE };
    const known = await this.intelligence.reputation(ip).catch(() => null);
    if (!known) return base; // an address the intelligence area cannot read: nothing more to say
    let score = known.score;
    const reasons: string[] = [];
    if (known.total_reports > 0)
      reasons.push(
        `${known.total_reports} abuse report${known.total_reports === 1 ? '' : 's'} (score ${score})`,
      );
    const raise = (floor: number, reason: string) => {
      score = Math.max(score, floor);
      reasons.push(reason);
    };
    if (known.flags.botnet) raise(90, 'listed as part of a botnet');
    if (known.flags.tor) raise(75, 'a Tor exit node');
    if (known.flags.proxy) raise(60, 'an anonymising proxy');
    if (known.flags.vpn) raise(50, 'a VPN endpoint');
    if (known.flags.datacenter) raise(30, "in a data centre's network, not an access network");
    return {
      ip,
      score,
      level: levelOf(score),
      is_private: false,
      range: null,
      country: known.country,
      reasons,
      source: SOURCE,
    };
  }
}

const SOURCE = 'ip-intelligence';
