import { useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { FjordClient } from '../../../sdk/index.js';
import { must } from '../api.js';
import { useApi, useConsole } from '../context.js';
import { navigateIfStillHere } from '../router.js';
import { putThroughConsole } from '../ui/upload.js';
import { Failure } from '../ui/widgets.js';

/**
 * Uploads an image archive (`docker save` or an OCI layout as a tar, gzipped or not) the way the
 * API asks: an upload is created for its size, the file is PUT to the upload's address, and the
 * upload's id is what a deploy names. Progress is reported as bytes sent.
 */
async function uploadImage(
  api: FjordClient,
  csrf: string,
  file: File,
  progress: (sent: number) => void,
): Promise<string> {
  const upload = await must(api.POST('/v1/apps/image-uploads', { body: { size_bytes: file.size } }));
  if (!upload.upload_url) throw { status: 0, message: 'The upload has no address.', fields: {} };
  await putThroughConsole(upload.upload_url, file, csrf, progress);
  return upload.id;
}

/**
 * A form that deploys from an image: a reference a registry serves, or an archive uploaded from
 * this browser (with a progress bar). `deploy` gets the API's `image` value for either.
 */
export function ImageDeployForm({
  idPrefix,
  submitLabel,
  withName = false,
  deploy,
}: {
  idPrefix: string;
  submitLabel: string;
  withName?: boolean;
  /** `go` navigates only if the reader is still on the page the submit started from. */
  deploy(image: string | { upload_id: string }, name: string, go: (to: string) => void): Promise<unknown>;
}) {
  const api = useApi();
  const { session } = useConsole();
  const [name, setName] = useState('');
  const [source, setSource] = useState<'upload' | 'reference'>('upload');
  const [reference, setReference] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState<number | null>(null);
  const [step, setStep] = useState('');
  const [problem, setProblem] = useState<unknown>(null);
  return (
    <form
      class="form"
      onSubmit={async (e) => {
        e.preventDefault();
        setProblem(null);
        const go = navigateIfStillHere();
        try {
          let image: string | { upload_id: string } = reference.trim();
          if (source === 'upload') {
            if (!file) return;
            setStep('Uploading the image…');
            setSent(0);
            image = { upload_id: await uploadImage(api, session.csrf_token, file, setSent) };
          }
          setStep('Deploying…');
          await deploy(image, name.trim(), go);
          setStep('Deployed: the new revision starts.');
          setSent(null);
        } catch (err) {
          setProblem(err);
          setStep('');
        }
      }}
    >
      {withName && (
        <div class="field">
          <label for={`${idPrefix}-name`}>Name</label>
          <input
            id={`${idPrefix}-name`}
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </div>
      )}
      <fieldset>
        <legend>Image</legend>
        <label>
          <input
            type="radio"
            name={`${idPrefix}-source`}
            checked={source === 'upload'}
            onChange={() => setSource('upload')}
          />{' '}
          Upload an image archive
        </label>
        <label>
          <input
            type="radio"
            name={`${idPrefix}-source`}
            checked={source === 'reference'}
            onChange={() => setSource('reference')}
          />{' '}
          From a registry
        </label>
      </fieldset>
      {source === 'upload' ? (
        <div class="field">
          <label for={`${idPrefix}-file`}>Image archive (docker save or OCI, .tar or .tar.gz)</label>
          <input
            id={`${idPrefix}-file`}
            type="file"
            accept=".tar,.gz,.tgz,application/x-tar,application/gzip"
            required
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </div>
      ) : (
        <div class="field">
          <label for={`${idPrefix}-image`}>Image reference</label>
          <input
            id={`${idPrefix}-image`}
            required
            placeholder="docker.io/library/nginx:1.27"
            value={reference}
            onInput={(e) => setReference(e.currentTarget.value)}
          />
        </div>
      )}
      <div class="actions">
        <button type="submit" disabled={step === 'Uploading the image…' || step === 'Deploying…'}>
          {submitLabel}
        </button>
      </div>
      {sent !== null && file && (
        <progress max={Math.max(file.size, 1)} value={sent} aria-label="Image upload progress" />
      )}
      <p role="status" class="notice">
        {step}
      </p>
      {problem ? <Failure error={problem} /> : null}
    </form>
  );
}

/** On the apps list: create an app from an uploaded archive, then open its page. */
export function CreateAppFromUpload() {
  const api = useApi();
  const queries = useQueryClient();
  return (
    <details class="panel">
      <summary>Deploy an app from an uploaded image</summary>
      <ImageDeployForm
        idPrefix="app-upload"
        withName
        submitLabel="Upload and deploy"
        deploy={async (image, name, go) => {
          // The upload may take a while: the app opens only if the reader is still on this list.
          const app = await must(api.POST('/v1/apps', { body: { name, image } as never }));
          await queries.invalidateQueries({ queryKey: ['apps'] });
          go(`/apps/${encodeURIComponent(app.id)}`);
        }}
      />
    </details>
  );
}
