// The object browser's share panel: a presigned download link to one object.

import { useState } from 'preact/hooks';
import { must } from '../api.js';
import { useConsole } from '../context.js';
import { Failure } from '../ui/widgets.js';
import type { Entry } from './object-listing.js';

/** The expiries offered for a shared link (SigV4 allows at most 7 days). */
const EXPIRIES = [
  { seconds: 3600, label: '1 hour' },
  { seconds: 86400, label: '1 day' },
  { seconds: 7 * 86400, label: '7 days' },
];

/**
 * A presigned download link to one object, made by Fjord (the page holds no S3 secret): anyone
 * with the link can download the object from the S3 endpoint until it expires.
 */
export function ShareLink({ bucket, entry, onClose }: { bucket: string; entry: Entry; onClose(): void }) {
  const { api } = useConsole();
  const [expires, setExpires] = useState(3600);
  const [link, setLink] = useState<{ url: string; expires_at: string } | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const [copied, setCopied] = useState(false);
  return (
    <section class="panel share" aria-label={`Share ${entry.name}`}>
      <h2>Share {entry.name}</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setProblem(null);
          setCopied(false);
          try {
            setLink(
              await must(
                api.POST('/v1/storage/buckets/{bucket_name}/presign', {
                  params: { path: { bucket_name: bucket } },
                  body: { key: entry.key, expires_in_seconds: expires },
                }),
              ),
            );
          } catch (err) {
            setProblem(err);
          }
        }}
      >
        <label for="share-expiry">Link works for</label>{' '}
        <select id="share-expiry" value={expires} onChange={(e) => setExpires(Number(e.currentTarget.value))}>
          {EXPIRIES.map((x) => (
            <option key={x.seconds} value={x.seconds}>
              {x.label}
            </option>
          ))}
        </select>{' '}
        <button type="submit" class="primary">
          Create link
        </button>{' '}
        <button type="button" onClick={onClose}>
          Close
        </button>
      </form>
      {problem ? <Failure error={problem} /> : null}
      {link && (
        <>
          <p class="warning">
            Anyone with this link can download the object until{' '}
            <time dateTime={link.expires_at}>{new Date(link.expires_at).toLocaleString()}</time>.
          </p>
          <output class="secret-value" aria-label="Presigned link">
            {link.url}
          </output>
          <div class="actions">
            <button
              type="button"
              onClick={async () => {
                await navigator.clipboard.writeText(link.url);
                setCopied(true);
              }}
            >
              {copied ? 'Copied' : 'Copy link'}
            </button>
          </div>
        </>
      )}
    </section>
  );
}
