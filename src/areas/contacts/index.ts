import { defineArea } from '../wiring.js';
import { contactsMigrations } from './migrations.js';
import { contactsRoutes } from './routes.js';
import { ContactsService } from './service.js';

export type { ContactErasure, ContactView, Recipient } from './service.js';
export { ContactsService } from './service.js';

/** Contacts and contact groups (doc 3, "Contacts"). Its service is `services.contacts`. */
export const contactsArea = defineArea({
  name: 'contacts',
  migrations: contactsMigrations,
  setup(kernel) {
    const service = new ContactsService(kernel.store, kernel.audit, kernel.clock);
    return { service, routes: contactsRoutes(service) };
  },
});
