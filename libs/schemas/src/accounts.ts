import { z } from 'zod';
import { IndexedText, Uuid } from './common';

/** Long enough to resist guessing once hashed; no other rule, as NIST SP 800-63B advises. */
export const Password = z.string().min(12, 'at least 12 characters').max(1024);

export const LoginSchema = z.object({
  email: z.email().max(320),
  password: z.string().min(1).max(1024),
  /** The organization to work in, when the person belongs to several (else their first, by name). */
  organization_id: Uuid.optional(),
});

export const KeySignInSchema = z.object({ api_key: z.string().min(8).max(512) });

export const PasswordChangeSchema = z.object({ current_password: z.string().min(1).max(1024), new_password: Password });

export const OrganizationSwitchSchema = z.object({ organization_id: Uuid });

export const BootstrapAdminSchema = z.object({
  email: z.email().max(320),
  name: IndexedText.min(1),
  password: Password,
  organization_name: IndexedText.min(1).default('default'),
});

/** How people sign in to this server: what the console's sign-in page offers. */
export const SignInOptionsSchema = z.object({
  password: z.boolean().describe('email and password (off when OIDC_ONLY)'),
  sso: z.object({ name: z.string() }).nullable().describe('single sign-on through an OpenID Connect provider'),
  bootstrap: z
    .boolean()
    .describe('no person exists yet and BOOTSTRAP_ADMIN_EMAIL is set: the first admin may be created'),
});

export const SignedInSchema = z.object({
  user: z.object({ id: z.string(), email: z.string(), name: z.string() }).nullable(),
  organization_id: z.string(),
  role: z.enum(['admin', 'member', 'viewer']),
  must_change_password: z.boolean(),
});

/**
 * What the OpenID provider sends the browser back with (RFC 6749 §4.1.2): a code and the state, or an error.
 * Providers add parameters of their own (`iss`, `session_state`, ...), which are kept for openid-client's checks.
 */
export const OidcCallbackQuerySchema = z.looseObject({
  code: z.string().max(4096).optional(),
  state: z.string().max(1024).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(4096).optional(),
});
