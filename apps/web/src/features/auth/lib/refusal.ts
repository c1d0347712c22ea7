import { ApiError, errorMessage } from '../../../api/client';

/** The server's words as a sentence: capitalised, ended by a full stop. */
const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;

/**
 * What to tell someone whose sign-in was refused: `wrong` for a 401 (the same for an unknown email and a
 * wrong password, as the server answers), the lock's wait for a 429, the server's reason for a 403.
 */
export function refusal(err: unknown, wrong: string): string {
  if (!(err instanceof ApiError)) return errorMessage(err);
  if (err.status === 401) return wrong;
  if (err.status === 429) return `Sign-in is paused: ${err.message}.`;
  if (err.status === 403 || err.status === 404 || err.status === 409) return sentence(err.message);
  return errorMessage(err);
}
