import { useSyncExternalStore } from 'react';

// The API key lives in sessionStorage: it survives reloads of this tab and is gone when the tab closes.
// A sign-out (by hand, or because the API refused the key) clears it and leaves a message for the
// sign-in page to show.
const KEY = 'sightline.apiKey';

type Session = { apiKey: string | null; message: string | null };

let state: Session = { apiKey: readKey(), message: null };
const listeners = new Set<() => void>();

function readKey(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

function set(next: Session) {
  state = next;
  listeners.forEach((l) => l());
}

export const session = {
  get: () => state,
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  },
  signIn(apiKey: string) {
    sessionStorage.setItem(KEY, apiKey);
    set({ apiKey, message: null });
  },
  signOut(message: string | null = null) {
    sessionStorage.removeItem(KEY);
    set({ apiKey: null, message });
  },
};

export function useSession(): Session {
  return useSyncExternalStore(session.subscribe, session.get);
}
