import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { must, problemOf } from '../api.js';
import { useConsole } from '../context.js';
import { Link, useLocation } from '../router.js';
import { DataTable, type Row } from '../ui/table.js';
import { ConfirmDelete, Failure, QueryView } from '../ui/widgets.js';
import { bytes, type Entry, type Listing, parseListing } from './object-listing.js';
import { ShareLink } from './object-share.js';
import { uploadObject } from './object-upload.js';

interface Upload {
  name: string;
  size: number;
  sent: number;
  error: string | null;
}

/**
 * A bucket's objects: folders by prefix (the prefix is in the address), upload by picking or
 * dropping files (each with a progress bar), download, delete, and every version of a versioned
 * bucket. Everything goes through Fjord's API on this origin (storage.md, "Objects through the
 * API"), so the page needs no S3 key and makes no request to another address.
 */
export function ObjectBrowser({ bucket }: { bucket: string }) {
  const { api, session } = useConsole();
  const queries = useQueryClient();
  const { query } = useLocation();
  const prefix = query.get('prefix') ?? '';
  const versions = query.get('versions') === '1';
  // The pages loaded ("Load more"), for the folder and mode they were loaded in.
  const at = `${versions}:${prefix}`;
  const [loaded, setLoaded] = useState<{ at: string; pages: Listing['next'][] }>({ at, pages: [null] });
  const pages = loaded.at === at ? loaded.pages : [null];
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState<unknown>(null);
  const [dragging, setDragging] = useState(false);
  const [sharing, setSharing] = useState<Entry | null>(null);
  const listKey = ['storage', 'objects', bucket, prefix, versions, pages];
  const listing = useQuery({
    queryKey: listKey,
    queryFn: async () => {
      const entries: Entry[] = [];
      let next: Listing['next'] = null;
      for (const page of pages) {
        const { data, error, response } = await api.GET('/v1/storage/buckets/{bucket_name}/objects', {
          params: {
            path: { bucket_name: bucket },
            query: { prefix, delimiter: '/', ...(versions ? { versions: true } : {}), ...(page ?? {}) },
          },
          parseAs: 'text',
        });
        if (!response.ok) throw problemOf(error, response.status);
        const parsed = parseListing(String(data), prefix);
        // Folders repeat on each page of a listing: keep the first.
        for (const e of parsed.entries)
          if (e.kind !== 'folder' || !entries.some((x) => x.kind === 'folder' && x.key === e.key))
            entries.push(e);
        next = parsed.next;
      }
      return { entries, next };
    },
  });
  const refresh = () => queries.invalidateQueries({ queryKey: ['storage'] });
  const here = (p: string, v = versions) => {
    const q = new URLSearchParams(location.search);
    if (p) q.set('prefix', p);
    else q.delete('prefix');
    if (v) q.set('versions', '1');
    else q.delete('versions');
    const s = q.toString();
    return `/storage/${encodeURIComponent(bucket)}${s ? `?${s}` : ''}`;
  };

  const send = async (files: File[]) => {
    setProblem(null);
    setNotice('');
    const started = files.map((f) => ({ name: f.name, size: f.size, sent: 0, error: null }));
    setUploads(started);
    let done = 0;
    await Promise.all(
      files.map(async (f, i) => {
        const mark = (change: Partial<Upload>) =>
          setUploads((all) => all.map((u, j) => (j === i ? { ...u, ...change } : u)));
        try {
          await uploadObject(bucket, prefix + f.name, f, session.csrf_token, (sent) => mark({ sent }));
          mark({ sent: f.size });
          done++;
        } catch (err) {
          mark({ error: (err as { message?: string }).message ?? 'The upload failed.' });
        }
      }),
    );
    setNotice(`${done} of ${files.length} file${files.length === 1 ? '' : 's'} uploaded.`);
    await refresh();
  };

  const download = async (e: Entry) => {
    setProblem(null);
    try {
      const { data, error, response } = await api.GET('/v1/storage/buckets/{bucket_name}/object', {
        params: {
          path: { bucket_name: bucket },
          query: {
            key: e.key,
            ...(e.version_id && e.kind === 'version' ? { version_id: e.version_id } : {}),
          },
        },
        parseAs: 'blob',
      });
      if (!response.ok) throw problemOf(error, response.status);
      const url = URL.createObjectURL(data as Blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = e.name.split('/').pop() || 'object';
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    } catch (err) {
      setProblem(err);
    }
  };

  const remove = async (e: Entry) => {
    const versioned = e.kind === 'version' || e.kind === 'marker';
    await must(
      api.DELETE('/v1/storage/buckets/{bucket_name}/object', {
        params: {
          path: { bucket_name: bucket },
          query: { key: e.key, ...(versioned && e.version_id ? { version_id: e.version_id } : {}) },
        },
      }),
    );
    setNotice(`${e.name} was deleted.`);
    await refresh();
  };

  const crumbs = prefix.split('/').filter(Boolean);
  return (
    <>
      <nav aria-label="Folder" class="crumbs">
        <Link href={here('')}>{bucket}</Link>
        {crumbs.map((c, i) => (
          <span key={i}>
            {' / '}
            <Link href={here(`${crumbs.slice(0, i + 1).join('/')}/`)}>{c}</Link>
          </span>
        ))}
      </nav>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: dropping is a pointer shortcut; the labelled file input inside is the keyboard's way */}
      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          const files = Array.from(e.dataTransfer?.files ?? []);
          if (files.length) void send(files);
        }}
      >
        <label for="object-upload">Upload files to {prefix ? `/${prefix}` : 'the top folder'}</label>
        <input
          id="object-upload"
          type="file"
          multiple
          onChange={(e) => {
            const files = Array.from(e.currentTarget.files ?? []);
            e.currentTarget.value = '';
            if (files.length) void send(files);
          }}
        />
        <p class="hint">…or drop files here. A file over 5 GiB goes up in parts, three at a time.</p>
      </div>
      {uploads.length > 0 && (
        <ul class="uploads" aria-label="Uploads">
          {uploads.map((u, i) => (
            <li key={i}>
              <label for={`upload-${i}`}>{u.name}</label>{' '}
              <progress id={`upload-${i}`} max={Math.max(u.size, 1)} value={u.size ? u.sent : 1} />{' '}
              <span>{u.error ?? (u.sent >= u.size ? 'done' : `${bytes(u.sent)} of ${bytes(u.size)}`)}</span>
            </li>
          ))}
        </ul>
      )}
      <p role="status" class="notice">
        {notice}
      </p>
      {problem ? <Failure error={problem} /> : null}
      <p>
        <Link href={here(prefix, !versions)}>{versions ? 'Hide versions' : 'Show every version'}</Link>
      </p>
      {sharing && (
        <ShareLink key={sharing.key} bucket={bucket} entry={sharing} onClose={() => setSharing(null)} />
      )}
      <QueryView query={listing} what="objects">
        {(data) => (
          <>
            <DataTable
              name="objects"
              label={versions ? 'Object versions' : 'Objects'}
              rows={data.entries}
              columns={[
                {
                  key: 'name',
                  label: 'Name',
                  render: (r) =>
                    (r as Entry).kind === 'folder' ? (
                      <Link href={here(String(r['key']))}>{String(r['name'])}</Link>
                    ) : (
                      String(r['name'])
                    ),
                },
                { key: 'size', label: 'Size', render: (r) => bytes(r['size'] as number | null) },
                {
                  key: 'modified',
                  label: 'Modified',
                  render: (r) => (r['modified'] ? new Date(String(r['modified'])).toLocaleString() : '—'),
                },
                { key: 'storage_class', label: 'Class' },
                { key: 'etag', label: 'ETag' },
                ...(versions
                  ? [
                      { key: 'version_id', label: 'Version' },
                      {
                        key: 'latest',
                        label: 'Latest',
                        render: (r: Row) =>
                          (r as Entry).kind === 'marker' ? 'delete marker' : r['latest'] ? 'yes' : '',
                      },
                    ]
                  : []),
              ]}
              actions={(r) => {
                const e = r as Entry;
                if (e.kind === 'folder') return null;
                const what = e.kind === 'object' ? 'object' : 'version';
                return (
                  <div class="actions">
                    {e.kind !== 'marker' && (
                      <button
                        type="button"
                        onClick={() => void download(e)}
                        aria-label={`Download ${e.name}`}
                      >
                        Download
                      </button>
                    )}
                    {e.kind === 'object' && (
                      <button type="button" onClick={() => setSharing(e)} aria-label={`Share ${e.name}`}>
                        Share
                      </button>
                    )}
                    <ConfirmDelete name={e.name} what={what} onConfirm={() => remove(e)} />
                  </div>
                );
              }}
              empty={
                <p>
                  {prefix ? 'This folder is empty.' : 'No objects yet.'} Upload files above, or with any S3
                  client and a bucket key (below).
                </p>
              }
            />
            {data.next && (
              <button type="button" onClick={() => setLoaded({ at, pages: [...pages, data.next] })}>
                Load more objects
              </button>
            )}
          </>
        )}
      </QueryView>
    </>
  );
}
