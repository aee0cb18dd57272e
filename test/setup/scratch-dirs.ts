import { afterAll } from 'vitest';
import { removeScratchDirsLeft } from '../helpers/scratch-dir.js';

/** Every test file's setup: the scratch directories it made outside its tests go as it ends. */
afterAll(removeScratchDirsLeft);
