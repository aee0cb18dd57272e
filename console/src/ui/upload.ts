import type { ApiProblem } from '../api.js';

/**
 * PUTs a file to a presigned upload address through `/console/upload` on the console's own
 * origin (the page may connect nowhere else), with the session's CSRF header. XMLHttpRequest,
 * not fetch: only it reports an upload's progress.
 */
export function putThroughConsole(
  to: string,
  file: Blob,
  csrf: string,
  progress: (sent: number) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', `/console/upload?to=${encodeURIComponent(to)}`);
    xhr.setRequestHeader('x-fjord-csrf', csrf);
    xhr.upload.onprogress = (e) => progress(e.loaded);
    xhr.onload = () => {
      progress(file.size);
      if (xhr.status < 300) return resolve();
      let message = `The upload failed (${xhr.status}).`;
      try {
        message = JSON.parse(xhr.responseText).detail.message ?? message;
      } catch {}
      reject({ status: xhr.status, message, fields: {} } satisfies ApiProblem);
    };
    xhr.onerror = () =>
      reject({ status: 0, message: 'The upload was interrupted.', fields: {} } satisfies ApiProblem);
    xhr.send(file);
  });
}
