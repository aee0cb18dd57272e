import { useEffect, useState } from 'preact/hooks';
import { Failure } from './widgets.js';

/**
 * A section's long request (a snapshot, a backup, a restore): what is being done, the sentence it
 * ended with, and its failure. `run` rejects when the call fails, so a ConfirmDelete around it
 * stays open; `after` runs either way (it re-reads what the request changed).
 */
export function useWork(after: () => Promise<unknown>) {
  const [work, setWork] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState<unknown>(null);
  const run = async (what: string, call: () => Promise<string>) => {
    setWork(what);
    setProblem(null);
    setNotice('');
    try {
      setNotice(await call());
    } catch (err) {
      setProblem(err);
      throw err;
    } finally {
      setWork(null);
      await after();
    }
  };
  return { work, notice, problem, run };
}

/** Seconds since `running` became true, for a long request's progress line. */
export function useElapsed(running: boolean): number {
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    if (!running) return;
    setSeconds(0);
    const started = Date.now();
    const tick = setInterval(() => setSeconds(Math.floor((Date.now() - started) / 1000)), 500);
    return () => clearInterval(tick);
  }, [running]);
  return seconds;
}

/**
 * What useWork reports: while a request runs an indeterminate bar and what is being done (with
 * the seconds so far when `elapsed` is given), then the notice it ended with or its failure.
 */
export function WorkStatus({
  work,
  notice,
  problem,
  elapsed,
}: {
  work: string | null;
  notice: string;
  problem: unknown;
  elapsed?: number;
}) {
  return (
    <>
      {work && (
        <div class="progress-line">
          <progress aria-label={work} />
          <span role="status">
            {work}…{elapsed === undefined ? '' : ` ${elapsed} s`}
          </span>
        </div>
      )}
      <p role="status" class="notice">
        {notice}
      </p>
      {problem ? <Failure error={problem} /> : null}
    </>
  );
}
