import { AppError } from '../../kernel/errors.js';

/** The area's error catalogue; kernel/http turns kinds into statuses. */
export const contactsErrors = {
  contactNotFound: (id?: string) =>
    new AppError('not_found', 'contact_not_found', id ? `Contact ${id} not found.` : 'Contact not found.'),
  groupNotFound: (id?: string) =>
    new AppError(
      'not_found',
      'group_not_found',
      id ? `Contact group ${id} not found.` : 'Contact group not found.',
    ),
  memberNotFound: (groupId: string, contactId: string) =>
    new AppError(
      'not_found',
      'member_not_found',
      `Contact ${contactId} is not a member of group ${groupId}.`,
    ),
  invalidPhone: (value: string, path = '/body/phone_number') => {
    const message = `${JSON.stringify(value)} is not a valid phone number in international (E.164) form, e.g. +4791234567.`;
    return new AppError('invalid', 'invalid_phone_number', message, { errors: [{ path, message }] });
  },
  erasureIncomplete: (cause: unknown) =>
    new AppError(
      'unavailable',
      'erasure_incomplete',
      'The erasure could not reach every area that keeps this contact’s data; nothing was erased yet. Retry the request.',
      { cause },
    ),
  groupNameTaken: (name: string) =>
    new AppError(
      'conflict',
      'group_name_taken',
      `A contact group named ${JSON.stringify(name)} already exists.`,
    ),
};
