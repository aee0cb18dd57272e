import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files start longest first, by the durations a whole run wrote to test/file-durations.json
 * (`npm run test:durations` after `npm test`). A tier's workers take files from one queue; when
 * a 100-second file starts last, the tier waits for it alone on cores the others left idle. On
 * a fresh clone (as in CI) vitest has no durations of its own and would order by file size.
 * A file not in the table (a new one) starts first, as vitest does: its duration is unknown.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = durations(root);
    const of = (spec: TestSpecification) =>
      seconds[relative(root, spec.moduleId)] ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => of(b) - of(a));
  }
}

function durations(root: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(`${root}/test/file-durations.json`, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}
