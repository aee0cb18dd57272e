/**
 * The watch and embed pages' own script and style sheet, served by Fjord next to hls.js. Plain
 * browser JavaScript (no framework, no build step): it polls the public watch endpoint every
 * 10 seconds and shows what the answer says — a countdown, the password or token form, the live
 * player or the replay.
 */
export const WATCH_SCRIPT = `'use strict';
(() => {
  const root = document.getElementById('fjord-watch');
  const slug = root.dataset.slug;
  const api = root.dataset.api;
  const poll = Number(root.dataset.poll) * 1000;
  // The countdown runs on Fjord's clock (which an emulator may have moved), not the viewer's.
  const offset = Number(root.dataset.now) - Date.now();
  const $ = (id) => document.getElementById(id);
  const video = $('player');
  const state = $('state');
  const countdown = $('countdown');
  const grantKey = 'fjord-live-grant:' + slug;
  let grant = sessionStorage.getItem(grantKey);
  let token = new URLSearchParams(location.search).get('token');
  let view = null;
  let source = null;
  let hls = null;
  let timer = null;

  const show = (el, on) => { el.hidden = !on; };
  const say = (text) => { if (state.textContent !== text) state.textContent = text; };

  function two(n) { return String(n).padStart(2, '0'); }
  function tick() {
    if (!view || !view.countdown_enabled) return;
    const left = Math.max(0, Date.parse(view.scheduled_start_at) - (Date.now() + offset));
    const s = Math.floor(left / 1000);
    const d = Math.floor(s / 86400);
    const text = (d > 0 ? d + ' d ' : '') + two(Math.floor(s / 3600) % 24) + ':' + two(Math.floor(s / 60) % 60) + ':' + two(s % 60);
    $('countdown-value').textContent = text;
    $('countdown-value').setAttribute('datetime', view.scheduled_start_at);
  }

  function stop() {
    if (hls) { hls.destroy(); hls = null; }
    if (source) { video.removeAttribute('src'); video.load(); }
    source = null;
  }

  function play(url) {
    if (source === url) return;
    stop();
    source = url;
    video.muted = true; // browsers allow muted playback to start without a click
    if (window.Hls && window.Hls.isSupported()) {
      hls = new window.Hls({ liveDurationInfinity: true });
      hls.on(window.Hls.Events.ERROR, (_e, data) => {
        if (data.fatal) { stop(); say('Playback stopped. Trying again shortly.'); }
      });
      hls.loadSource(url);
      hls.attachMedia(video);
      hls.on(window.Hls.Events.MANIFEST_PARSED, () => { video.play().catch(() => {}); });
    } else if (video.canPlayType('application/vnd.apple.mpegurl')) {
      video.src = url; // Safari plays HLS itself
      video.play().catch(() => {});
    } else {
      say('This browser cannot play the stream.');
    }
  }

  const messages = {
    not_started: 'The event has not started yet.',
    access_required: 'This event needs a password or access code.',
    live: 'Live now.',
    rehearsal_hidden: 'The event has not started yet.',
    processing_replay: 'The event has ended. The replay will be available soon.',
    replay_available: 'Replay of the event.',
    ended_no_replay: 'The event has ended.',
    cancelled: 'The event was cancelled.',
  };

  function render() {
    const w = view.watch_state;
    say(messages[w] || '');
    show(countdown, view.countdown_enabled);
    tick();
    const needs = w === 'access_required';
    show($('password-form'), needs && view.auth_type === 'password');
    show($('token-form'), needs && view.auth_type === 'token');
    const url = view.live_playback ? view.live_playback.hls_url : view.replay_playback ? view.replay_playback.hls_url : null;
    show(video, url !== null);
    if (url) play(url); else stop();
  }

  async function consume(g) {
    const r = await fetch(api + '/consume-grant', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ access_grant: g }),
    });
    if (!r.ok) return false;
    grant = g;
    sessionStorage.setItem(grantKey, g);
    return true;
  }

  // A \`?token=\` in the page's address is checked only when the event asks for access (a check
  // mints a grant): an answer of \`access_required\` is asked again at once with the token.
  async function refresh(withToken = false) {
    clearTimeout(timer);
    timer = setTimeout(refresh, poll);
    const q = grant ? '?grant=' + encodeURIComponent(grant) : withToken ? '?token=' + encodeURIComponent(token) : '';
    let r;
    try { r = await fetch(api + q, { headers: { accept: 'application/json' }, cache: 'no-store' }); }
    catch { return say('Cannot reach the server. Trying again.'); }
    if (r.status === 404) { clearTimeout(timer); stop(); return say('This event does not exist.'); }
    if (r.status === 403) { clearTimeout(timer); return say('This event is only for members of its organisation.'); }
    if (!r.ok) return say('The server is busy. Trying again.');
    const next = await r.json();
    if (next.watch_state === 'access_required' && grant) { grant = null; sessionStorage.removeItem(grantKey); }
    if (next.watch_state === 'access_required' && token && !withToken) return refresh(true);
    if (withToken && !next.access_grant) token = null; // refused: the form asks instead
    if (next.access_grant && !(await consume(next.access_grant)))
      Object.assign(next, { watch_state: 'access_required', live_playback: null, replay_playback: null });
    view = next;
    render();
  }

  async function verify(form, path, field) {
    const input = form.querySelector('input');
    const error = form.querySelector('[role=alert]');
    error.textContent = '';
    const r = await fetch(api + path, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ [field]: input.value }),
    });
    const body = await r.json().catch(() => ({}));
    if (r.status === 429) { error.textContent = 'Too many attempts. Try again later.'; return; }
    if (!r.ok || !body.verified) {
      error.textContent = body.reason === 'expired' ? 'This access code has expired.'
        : body.reason === 'exhausted' ? 'This access code has been used up.'
        : field === 'password' ? 'Wrong password.' : 'Unknown access code.';
      input.focus();
      return;
    }
    input.value = '';
    if (!(await consume(body.access_grant))) { error.textContent = 'Access could not start. Try again.'; return; }
    await refresh();
    video.focus();
  }

  $('password-form').addEventListener('submit', (e) => { e.preventDefault(); void verify(e.target, '/verify-password', 'password'); });
  $('token-form').addEventListener('submit', (e) => { e.preventDefault(); void verify(e.target, '/verify-token', 'token'); });
  setInterval(tick, 1000);
  void refresh();
})();
`;

export const WATCH_STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#111;background:#fafafa}
main{max-width:960px;margin:0 auto;padding:1rem}
body.embed{background:#000;color:#fff}
body.embed main{max-width:none;padding:0}
h1{font-size:1.5rem;margin:.5rem 0}
.stage{position:relative;background:#000;aspect-ratio:16/9;display:flex;align-items:center;justify-content:center}
video{width:100%;height:100%;background:#000}
#countdown{color:#fff;text-align:center;font-size:1.25rem}
#countdown-value{display:block;font-size:2.5rem;font-variant-numeric:tabular-nums}
#state{margin:.5rem 0;font-weight:600}
body.embed #state{position:absolute;top:0;left:0;margin:.5rem;padding:.25rem .5rem;background:rgba(0,0,0,.6)}
form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}
body.embed form{position:absolute;bottom:0;left:0;right:0;padding:.5rem;background:rgba(0,0,0,.75)}
input{font:inherit;padding:.4rem;min-width:14rem}
button{font:inherit;padding:.4rem 1rem;cursor:pointer}
[role=alert]{color:#b00020;flex-basis:100%;margin:0}
body.embed [role=alert]{color:#ff8a80}
:focus-visible{outline:3px solid #1a73e8;outline-offset:2px}
[hidden]{display:none!important}
`;
