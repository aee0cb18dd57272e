import { useQuery } from '@tanstack/preact-query';
import { useEffect, useRef, useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi } from '../../context.js';

/** The part of hls.js this player uses. */
interface HlsInstance {
  loadSource(url: string): void;
  attachMedia(video: HTMLVideoElement): void;
  on(event: string, cb: (event: string, data: { fatal?: boolean; details?: string }) => void): void;
  destroy(): void;
}
interface HlsClass {
  new (config?: Record<string, unknown>): HlsInstance;
  isSupported(): boolean;
  Events: { ERROR: string };
}

let loading: Promise<HlsClass> | null = null;
/**
 * hls.js as Fjord serves it to its watch pages (`/live/assets/hls.min.js`): the same player, from
 * the same origin, loaded when a player is first shown, so the console's own script stays small.
 */
function loadHls(): Promise<HlsClass> {
  loading ??= new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = '/live/assets/hls.min.js';
    s.onload = () => resolve((window as unknown as { Hls: HlsClass }).Hls);
    s.onerror = () => {
      loading = null;
      reject(new Error('The player could not be loaded.'));
    };
    document.head.append(s);
  });
  return loading;
}

/**
 * The event's player: the watch view as the console's session sees it (a `tenant_only` event
 * answers to it, as to the customer's own token), the live stream while live, else the replay.
 */
export function Player({ slug, live }: { slug: string; live: boolean }) {
  const api = useApi();
  const video = useRef<HTMLVideoElement>(null);
  const [state, setState] = useState('');
  const view = useQuery({
    queryKey: ['live', 'watch', slug],
    queryFn: () => must(api.GET('/v1/live-events/watch/{slug}', { params: { path: { slug } } })),
    // The watch state follows the event; the player itself streams without polling.
    refetchInterval: 10_000,
  });
  const found = view.data?.live_playback?.hls_url ?? view.data?.replay_playback?.hls_url ?? null;
  const kind = view.data?.live_playback ? 'live' : view.data?.replay_playback ? 'replay' : 'none';
  // Each poll may carry a fresh grant in the address: the player keeps the one it started with
  // until what plays changes (live to replay), so it is not restarted every ten seconds.
  const [playing, setPlaying] = useState<{ kind: string; url: string | null }>({ kind: 'none', url: null });
  if (playing.kind !== kind) setPlaying({ kind, url: found });
  const url = playing.kind === kind ? playing.url : found;
  useEffect(() => {
    const el = video.current;
    if (!el || !url) return;
    let hls: HlsInstance | null = null;
    let gone = false;
    setState('Loading the stream…');
    el.onplaying = () => setState(live ? 'Playing live.' : 'Playing.');
    void loadHls()
      .then((Hls) => {
        if (gone) return;
        if (!Hls.isSupported()) {
          el.src = url; // Safari plays HLS itself
          return;
        }
        hls = new Hls({ lowLatencyMode: false });
        hls.on(
          Hls.Events.ERROR,
          (_e, d) => d.fatal && setState(`The stream stopped (${d.details ?? 'error'}).`),
        );
        hls.loadSource(url);
        hls.attachMedia(el);
        el.muted = true;
        void el.play().catch(() => setState('Press play to start.'));
      })
      .catch((err: Error) => setState(err.message));
    return () => {
      gone = true;
      hls?.destroy();
    };
  }, [url, live]);
  const v = view.data;
  return (
    <>
      <p role="status" class="notice">
        {view.error
          ? 'This event cannot be watched from here.'
          : !v
            ? 'Loading…'
            : url
              ? state
              : v.requires_auth && !v.access_grant
                ? `Viewers of this ${v.visibility_mode} event prove their ${v.auth_type ?? 'access'} on the watch page.`
                : `Nothing to play: the event is ${v.watch_state}.`}
      </p>
      <video ref={video} class="player" controls playsInline muted aria-label="Event player" hidden={!url} />
    </>
  );
}
