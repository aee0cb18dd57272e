import type { Action } from './action.js';
import { appsLogs } from './apps-logs.js';
import { chatbotAsk, llmChat } from './chat.js';
import { dbConnect } from './db-connect.js';
import { speechTranscribe } from './speech-transcribe.js';
import { vpsSsh } from './vps-ssh.js';

/** Commands that are more than one operation call (see aliases.ts for the one-call commands). */
export const ACTIONS: Action[] = [dbConnect, speechTranscribe, llmChat, chatbotAsk, appsLogs, vpsSsh];

export const findAction = (words: string[]) => ACTIONS.find((a) => a.words.every((w, i) => words[i] === w));
