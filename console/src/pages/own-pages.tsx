import type { VNode } from 'preact';
import { IotPages } from './iot/iot.js';
import { LivePages } from './live/live.js';
import { UsagePage } from './usage.js';
import './platform.css';

/**
 * Areas whose pages are their own (charts, players, editors) rather than the generic list and
 * detail pages: the area's slug, and its page for the path under /console.
 */
export const OWN_PAGES: Record<string, (path: string) => VNode> = {
  iot: (path) => <IotPages path={path} />,
  live: (path) => <LivePages path={path} />,
  usage: () => <UsagePage />,
};
