import type { FunctionComponent } from 'preact';
import { ChatbotsPage } from './chatbots.js';
import { ContactsPage } from './contacts.js';
import { GpuPage } from './gpu.js';
import { IpPage } from './ip.js';
import { LlmPage } from './llm.js';
import { SmsPage } from './sms.js';
import { SpeechPage } from './speech.js';
import { VerifyPage } from './verify.js';
import './platform.css';

/** The platform areas with pages of their own (the shell routes `/<slug>/…` to them). */
export const PLATFORM_PAGES: Record<string, FunctionComponent<{ path: string }>> = {
  speech: SpeechPage,
  llm: LlmPage,
  chatbots: ChatbotsPage,
  gpu: GpuPage,
  ip: IpPage,
  sms: SmsPage,
  verification: VerifyPage,
  contacts: ContactsPage,
};
