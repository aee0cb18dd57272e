import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { FjordClient } from '../../sdk/index.js';
import type { Session } from './api.js';

export interface ConsoleContext {
  api: FjordClient;
  session: Session;
  signOut(): Promise<void>;
}

export const Ctx = createContext<ConsoleContext | null>(null);

export function useConsole(): ConsoleContext {
  const c = useContext(Ctx);
  if (!c) throw new Error('useConsole outside the signed-in console');
  return c;
}
export const useApi = () => useConsole().api;
