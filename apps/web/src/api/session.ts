import { useSyncExternalStore } from 'react';

// The session itself is an HttpOnly cookie the browser sends and script cannot read: the console keeps no
// key or token, only what it has learnt of the cookie. `unknown` until the server answers (a page opened
// afresh), `signed-in` once it has, `signed-out` after a sign-out or a refusal, with a message for the
// sign-in page to show.
type SessionStatus = 'unknown' | 'signed-in' | 'signed-out';

type Session = { status: SessionStatus; message: string | null };

let state: Session = { status: 'unknown', message: null };
const listeners = new Set<() => void>();

function set(next: Session) {
  if (next.status === state.status && next.message === state.message) return;
  state = next;
  listeners.forEach((l) => l());
}

export const session = {
  get: () => state,
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  },
  /** The server accepted the cookie (a sign-in, or an answer of `/me`). */
  signedIn() {
    set({ status: 'signed-in', message: null });
  },
  signOut(message: string | null = null) {
    set({ status: 'signed-out', message });
  },
  /**
   * The server refused the cookie: someone signed in sees why; a page opened without a session just goes
   * to the sign-in page.
   */
  refused(reason: string) {
    set({ status: 'signed-out', message: state.status === 'signed-in' ? `You were signed out: ${reason}.` : null });
  },
};

export function useSession(): Session {
  return useSyncExternalStore(session.subscribe, session.get);
}
