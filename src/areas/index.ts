import type { AreaModule } from '../kernel/kernel.js';
import { accountArea } from './account/index.js';
import { appsArea } from './apps/index.js';
import { chatbotArea } from './chatbot/index.js';
import { clustersArea } from './clusters/index.js';
import { contactsArea } from './contacts/index.js';
import { databasesArea } from './databases/index.js';
import { dnsArea } from './dns/index.js';
import { domainVerificationArea } from './domain-verification/index.js';
import { dynArea } from './dyn/index.js';
import { gpuArea } from './gpu/index.js';
import { iotArea } from './iot/index.js';
import { ipArea } from './ip/index.js';
import { liveArea } from './live/index.js';
import { llmArea } from './llm/index.js';
import { regionsArea } from './regions/index.js';
import { smsArea } from './sms/index.js';
import { speechArea } from './speech/index.js';
import { storageArea } from './storage/index.js';
import { verifyArea } from './verify/index.js';
import { vpsArea } from './vps/index.js';
import { webhooksArea } from './webhooks/index.js';

/**
 * The one list of areas, in set-up order: an area may use the services of the areas above it.
 */
export const AREAS: AreaModule[] = [
  accountArea,
  regionsArea,
  webhooksArea,
  storageArea,
  databasesArea,
  dnsArea,
  domainVerificationArea,
  dynArea,
  contactsArea,
  smsArea,
  verifyArea,
  llmArea,
  chatbotArea,
  gpuArea,
  vpsArea,
  liveArea,
  ipArea,
  clustersArea,
  iotArea,
  speechArea,
  appsArea,
];
