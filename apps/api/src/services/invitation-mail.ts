import type { FastifyRequest } from 'fastify';
import nodemailer from 'nodemailer';
import { INVITATION_DAYS } from '@sightline/db';
import type { ApiKeyRole } from '@sightline/schemas';

/**
 * Mails an invitation's link through SMTP_URL, from SMTP_FROM; answers whether the server took it. Without
 * SMTP_URL, or when the server refuses or cannot be reached, the admin still has the link to hand over:
 * the invitation stands, and the failure is logged.
 */
export async function mailInvitation(
  req: FastifyRequest,
  invitation: { email: string; role: ApiKeyRole; link: string; organizationName: string; invitedBy: string },
): Promise<boolean> {
  const { SMTP_URL, SMTP_FROM } = req.server.config;
  if (!SMTP_URL) return false;
  const transport = nodemailer.createTransport(SMTP_URL);
  try {
    await transport.sendMail({
      from: SMTP_FROM,
      to: invitation.email,
      subject: `You are invited to ${invitation.organizationName} on Sightline`,
      text: [
        `${invitation.invitedBy} invites you to join ${invitation.organizationName} on Sightline as ${invitation.role}.`,
        '',
        `Open this link within ${INVITATION_DAYS} days to accept: ${invitation.link}`,
        '',
        'It works once. If you did not expect this invitation, ignore this mail.',
      ].join('\n'),
    });
    return true;
  } catch (err) {
    req.log.warn({ err, to: invitation.email }, 'invitation not mailed: the link is answered to the admin only');
    return false;
  } finally {
    transport.close();
  }
}
