import { fromJson } from '../../kernel/store/dialect.js';
import type { ContactsTable } from './migrations.js';
import type { ContactType } from './schemas.js';

export interface ContactView {
  id: string;
  type: ContactType;
  name: string;
  company_name: string | null;
  phone_number: string | null;
  email: string | null;
  tags: string[];
  notes: string | null;
  created_at: string;
  updated_at: string;
}

export const iso = (ms: number) => new Date(ms).toISOString();
export const fold = (s: string) => s.normalize('NFKC').toLocaleLowerCase('und');

/** Tags trimmed, without duplicates (compared case-insensitively, the first spelling kept). */
export function cleanTags(tags: readonly string[] | null | undefined): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of tags ?? []) {
    const tag = raw.trim();
    const key = fold(tag);
    if (tag === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(tag);
  }
  return out;
}

export const emptyToNull = (v: string | null | undefined) => {
  if (v === undefined) return undefined;
  const t = v?.trim() ?? '';
  return t === '' ? null : t;
};

export function contactView(r: ContactsTable): ContactView {
  return {
    id: r.id,
    type: r.type as ContactType,
    name: r.name ?? '',
    company_name: r.company_name,
    phone_number: r.phone_number,
    email: r.email,
    tags: fromJson<string[]>(r.tags, []),
    notes: r.notes,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** What search and sorting read, lower-cased here so both engines compare the same text. */
export function derived(c: Pick<ContactsTable, 'name' | 'company_name' | 'phone_number' | 'email'>) {
  const parts = [c.name, c.company_name, c.email, c.phone_number].filter((p): p is string => !!p);
  return { search_text: fold(parts.join('\u0001')), sort_name: fold(c.name ?? '') };
}
