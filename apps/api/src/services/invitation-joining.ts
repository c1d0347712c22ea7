import {
  addMembership,
  createUser,
  listMemberships,
  recordAudit,
  transaction,
  useInvitation,
  type Sql,
  type UserRow,
  type ValidInvitation,
} from '@sightline/db';
import { AppError } from '../errors';

/** One answer for an unknown, used, revoked or expired link: the token's holder learns nothing more. */
export const INVALID_INVITATION = 'this invitation is not valid: it was used, revoked or has expired';

/** The account an invitation is accepted with: an existing one (already proven), or one to create. */
export type Joiner = { existing: UserRow } | { create: { name: string; passwordHash: string | null } };

/**
 * Accepts an invitation, once, with an account its holder has proven (by its password, or by the single
 * sign-on provider vouching for the invited email): marks the link used, creates the account when asked,
 * adds the membership and records it. 404 for a link that was used meanwhile, 409 for a member already.
 */
export async function joinByInvitation(sql: Sql, invitation: ValidInvitation, joiner: Joiner): Promise<UserRow> {
  return transaction(sql, async (tx): Promise<UserRow> => {
    // Marked used first: of two acceptances of one link, one alone gets past this.
    if (!(await useInvitation(tx, invitation.id))) throw new AppError(404, INVALID_INVITATION);
    const person =
      'existing' in joiner ? joiner.existing : await createUser(tx, { email: invitation.email, ...joiner.create });
    // The email got an account between the caller's check and now: it was not proven.
    if (!person) throw new AppError(409, 'an account was just made for this email: open the link again');
    const joined = await listMemberships(tx, person.id);
    if (joined.some((m) => m.organization_id === invitation.organization_id))
      throw new AppError(409, `you are already a member of ${invitation.organization_name}: sign in`);
    await addMembership(tx, invitation.organization_id, person.id, invitation.role);
    await recordAudit(
      tx,
      invitation.organization_id,
      { keyId: null, userId: person.id, label: person.email, role: invitation.role },
      {
        action: 'accept',
        target: { kind: 'invitation', id: invitation.id, name: invitation.email },
        after: { email: invitation.email, role: invitation.role, new_account: !('existing' in joiner) },
      },
    );
    return person;
  });
}
