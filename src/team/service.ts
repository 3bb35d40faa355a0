import type { Logger } from 'pino';
import { recordAudit, type AuditActor } from '../audit/store.ts';
import { withTx } from '../db/tx.ts';
import { ApiError, resourceMissing } from '../lib/errors.ts';
import type { Services } from '../services.ts';
import type { Role } from './roles.ts';
import { countOwners, deleteMember, findMember, lockTeam, setRefundLimit, setRole, type MemberRow } from './store.ts';

/** Who changes the team: a signed-in user of the account, with their role and where they are. */
export interface TeamActor {
  accountId: string;
  userId: string;
  email: string;
  role: Role;
  ip: string | null;
}

export const auditActor = (a: TeamActor): AuditActor => ({ type: 'user', id: a.userId, label: a.email, ip: a.ip });

const forbidden = (message: string) => new ApiError('forbidden', message);

/**
 * The rules every change of the team follows, under the team's lock (store.ts lockTeam): an
 * administrator never changes or removes an owner nor makes one; the last owner stays an owner.
 */
async function target(sql: Parameters<typeof findMember>[0], actor: TeamActor, userId: string): Promise<MemberRow> {
  await lockTeam(sql, actor.accountId);
  const member = await findMember(sql, actor.accountId, userId);
  if (!member) throw resourceMissing('user', userId);
  if (member.role === 'owner' && actor.role !== 'owner') throw forbidden('Only an owner can change or remove an owner.');
  return member;
}

/** Changes a member's role; refused when it would leave the account without an owner. */
export async function changeRole(s: Services, log: Logger, actor: TeamActor, userId: string, role: Role): Promise<MemberRow> {
  return withTx(s, log, async (tx) => {
    const member = await target(tx.sql, actor, userId);
    if (role === 'owner' && actor.role !== 'owner') throw forbidden('Only an owner can make someone an owner.');
    if (member.role === role) return member;
    if (member.role === 'owner' && (await countOwners(tx.sql, actor.accountId)) <= 1) {
      throw new ApiError('resource_invalid_state', 'The account must keep at least one owner: make someone else an owner first.', 'role');
    }
    await setRole(tx.sql, actor.accountId, userId, role);
    await recordAudit(tx.sql, {
      accountId: actor.accountId,
      livemode: null,
      actor: auditActor(actor),
      action: 'team.role_changed',
      object: { type: 'user', id: userId },
      data: { email: member.email, from: member.role, to: role },
    });
    return { ...member, role };
  });
}

/**
 * Removes a member: their sessions end in the same commit (the next request of an open session
 * finds none) and their unused set-password link (a pending invitation) dies with them.
 */
export async function removeMember(s: Services, log: Logger, actor: TeamActor, userId: string): Promise<MemberRow> {
  return withTx(s, log, async (tx) => {
    const member = await target(tx.sql, actor, userId);
    if (member.role === 'owner' && (await countOwners(tx.sql, actor.accountId)) <= 1) {
      throw new ApiError('resource_invalid_state', 'The account must keep at least one owner: the last owner cannot be removed.');
    }
    await deleteMember(tx.sql, actor.accountId, userId);
    await recordAudit(tx.sql, {
      accountId: actor.accountId,
      livemode: null,
      actor: auditActor(actor),
      action: member.has_password ? 'team.user_removed' : 'team.invitation_revoked',
      object: { type: 'user', id: userId },
      data: { email: member.email, role: member.role },
    });
    return member;
  });
}

/** The owner sets (or, with null, removes) how much a support user may refund at once in a currency. */
export async function updateRefundLimit(s: Services, log: Logger, actor: TeamActor, currency: string, amount: number | null): Promise<void> {
  await withTx(s, log, async (tx) => {
    await setRefundLimit(tx.sql, actor.accountId, currency, amount);
    await recordAudit(tx.sql, {
      accountId: actor.accountId,
      livemode: null,
      actor: auditActor(actor),
      action: 'settings.refund_limit_changed',
      data: { currency, amount },
    });
  });
}
