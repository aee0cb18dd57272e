import { literalStem, topicMatches, topicStem } from './topic-match.js';

export interface SubOptions {
  qos: number;
  rh?: number;
  rap?: boolean;
  nl?: boolean;
  subscriptionIdentifier?: number;
}

/** What subscriptionsByTopic answers, as aedes-persistence's trie does. */
export interface MatchedSub {
  clientId: string;
  topic: string;
  qos: number;
  rh?: number;
  rap?: boolean;
  nl?: boolean;
}

/**
 * The stored subscriptions in memory, for the broker's lookups on every publish: all of them by
 * client, and the QoS > 0 ones (those messages are queued for) by the literal stem of their
 * filter, so a publish looks at the filters that can match its topic and the wildcard ones.
 */
export class SubscriptionIndex {
  /** clientId → topic → options: every stored subscription, QoS 0 ones included. */
  private readonly byClient = new Map<string, Map<string, SubOptions>>();
  /** QoS > 0 subscriptions, indexed by literal stem. */
  private readonly byStem = new Map<string, Map<string, Map<string, MatchedSub>>>();
  private readonly wildcardFilters = new Map<string, Map<string, MatchedSub>>();
  /** QoS > 0 subscriptions held. */
  qosCount = 0;

  get clientCount(): number {
    return this.byClient.size;
  }

  ofClient(clientId: string): Map<string, SubOptions> | undefined {
    return this.byClient.get(clientId);
  }

  /** The client ids subscribed to exactly this filter. */
  clientsOn(topic: string): string[] {
    const ids: string[] = [];
    for (const [clientId, topics] of this.byClient) if (topics.has(topic)) ids.push(clientId);
    return ids;
  }

  /** The QoS > 0 subscriptions whose filter matches `topic`. */
  matching(topic: string): MatchedSub[] {
    const found: MatchedSub[] = [];
    const add = (filters: Map<string, Map<string, MatchedSub>> | undefined) => {
      if (!filters) return;
      for (const [filter, clients] of filters)
        if (topicMatches(filter, topic)) for (const sub of clients.values()) found.push({ ...sub });
    };
    // Wildcard filters first: the order aedes-persistence's trie answers in.
    add(this.wildcardFilters);
    add(this.byStem.get(topicStem(topic)));
    return found;
  }

  clear() {
    this.byClient.clear();
    this.byStem.clear();
    this.wildcardFilters.clear();
    this.qosCount = 0;
  }

  remember(clientId: string, topic: string, options: SubOptions) {
    let stored = this.byClient.get(clientId);
    if (!stored) {
      stored = new Map();
      this.byClient.set(clientId, stored);
    }
    this.unindex(clientId, topic);
    stored.set(topic, options);
    if (options.qos > 0) {
      const filters = this.filtersFor(topic, true)!;
      let clients = filters.get(topic);
      if (!clients) {
        clients = new Map();
        filters.set(topic, clients);
      }
      clients.set(clientId, {
        clientId,
        topic,
        qos: options.qos,
        rh: options.rh,
        rap: options.rap,
        nl: options.nl,
      });
      this.qosCount++;
    }
  }

  forget(clientId: string, topic: string) {
    const stored = this.byClient.get(clientId);
    if (!stored?.has(topic)) return;
    this.unindex(clientId, topic);
    stored.delete(topic);
    if (stored.size === 0) this.byClient.delete(clientId);
  }

  private unindex(clientId: string, topic: string) {
    const filters = this.filtersFor(topic, false);
    const clients = filters?.get(topic);
    if (!clients?.delete(clientId)) return;
    this.qosCount--;
    if (clients.size === 0) filters!.delete(topic);
    const stem = literalStem(topic);
    if (stem !== null && filters!.size === 0) this.byStem.delete(stem);
  }

  private filtersFor(filter: string, create: boolean) {
    const stem = literalStem(filter);
    if (stem === null) return this.wildcardFilters;
    let filters = this.byStem.get(stem);
    if (!filters && create) {
      filters = new Map();
      this.byStem.set(stem, filters);
    }
    return filters;
  }
}
