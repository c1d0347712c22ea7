import { api } from '../../api/client';
import type { WhoAmI } from '../../api/types';

/** Checks a key before it becomes the session's: its own 401 is the sign-in form's to show. */
export const checkKey = (apiKey: string) => api<WhoAmI>('/me', { apiKey });
