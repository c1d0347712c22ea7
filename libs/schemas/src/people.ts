import { z } from 'zod';
import { ApiKeyRole, PersonSchema } from './access';
import { IndexedText, Uuid } from './common';

/** A member of the organization, with their role in it. */
export const UserSchema = PersonSchema.extend({
  role: ApiKeyRole,
  created_at: z.string().describe('when they joined the organization'),
  last_seen_at: z
    .string()
    .nullable()
    .describe('their last request in this organization, from the sessions still kept (null when they have none)'),
});
export const UserParams = z.object({ id: Uuid });
export const UserRoleSchema = z.object({ role: ApiKeyRole });
export const SessionsEndedSchema = z.object({
  id: z.string(),
  sessions_ended: z.number().int().describe("the person's sessions in this organization that were ended"),
});

export const InvitationCreateSchema = z.object({ email: z.email().max(320), role: ApiKeyRole });

const InvitationFields = z.object({
  id: z.string(),
  email: z.string(),
  role: ApiKeyRole,
  created_at: z.string(),
  expires_at: z.string().describe('7 days after it was made'),
});
/** A pending invitation: its link was shown once, when it was made, and is not kept. */
export const InvitationSchema = InvitationFields.extend({ invited_by: PersonSchema.nullable() });
export const InvitationCreatedSchema = InvitationFields.extend({
  link: z.string().describe('the one-time link to the console page that accepts it: shown this once, never stored'),
  mailed: z.boolean().describe('whether it was mailed to the person (SMTP_URL set, and the server took it)'),
});
export const InvitationParams = z.object({ id: Uuid });

/** The token of an invitation's link: 32 random bytes in base64url. */
const InvitationToken = z.string().min(1).max(128);
export const InvitationQuery = z.object({ token: InvitationToken });
export const OidcStartQuery = z.object({
  invitation: InvitationToken.optional().describe(
    "an invitation's token: the sign-in accepts it, if the provider vouches for the invited email",
  ),
});
export const InvitationPreviewSchema = z.object({
  email: z.string(),
  role: ApiKeyRole,
  organization_name: z.string(),
  existing_account: z.boolean().describe('the email has an account already: accepting asks for its password'),
  password: z
    .boolean()
    .describe(
      'accepting with a password is possible (a new account chooses one, an existing one gives its own); false when passwords are off (OIDC_ONLY) or the account has none (single sign-on)',
    ),
  sso: z
    .object({ name: z.string() })
    .nullable()
    .describe(
      'accept through the single sign-on provider (GET /auth/oidc/start?invitation=<token>), which must vouch for the invited email',
    ),
});
export const AcceptInvitationSchema = z.object({
  token: InvitationToken,
  /** A new account's name (required then); an existing account keeps its own. */
  name: IndexedText.min(1).optional(),
  /** A new account's password (at least 12 characters), or the existing account's. */
  password: z.string().min(1).max(1024),
});
