import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { idFloor, idTime, newId } from '../../src/lib/ids.ts';
import { retainedTables } from '../../src/retention/service.ts';

const DAY = 24 * 3600 * 1000;

describe('retention settings', () => {
  it('when nothing is set, then events, deliveries and attempts are kept 30 days, emails 180, Stripe events 30, keys 24 hours, partitions made 14 days ahead', () => {
    const c = loadConfig({}).retention;
    expect(c).toEqual({ eventsDays: 30, webhookDeliveriesDays: 30, emailsDays: 180, processorEventsDays: 30, partitionsAheadDays: 14 });
    expect(Object.fromEntries(retainedTables(c).map((t) => [t.name, t.keepMs / DAY]))).toEqual({
      events: 30,
      webhook_attempts: 30,
      webhook_deliveries: 30,
      emails: 180,
      processor_events: 30,
      idempotency_keys: 1,
    });
  });

  it('when events are kept longer and deliveries are not set, then deliveries and attempts follow the events', () => {
    expect(loadConfig({ RETENTION_EVENTS_DAYS: '90' }).retention).toMatchObject({ eventsDays: 90, webhookDeliveriesDays: 90 });
    expect(loadConfig({ RETENTION_EVENTS_DAYS: '7', RETENTION_WEBHOOK_DELIVERIES_DAYS: '45' }).retention).toMatchObject({ eventsDays: 7, webhookDeliveriesDays: 45 });
  });

  it.each([
    [{ RETENTION_EVENTS_DAYS: '60', RETENTION_WEBHOOK_DELIVERIES_DAYS: '30' }, 'RETENTION_WEBHOOK_DELIVERIES_DAYS: must be at least RETENTION_EVENTS_DAYS (60)'],
    [{ RETENTION_EVENTS_DAYS: '0' }, 'RETENTION_EVENTS_DAYS'],
    [{ RETENTION_EVENTS_DAYS: 'thirty' }, 'RETENTION_EVENTS_DAYS'],
    [{ RETENTION_EMAILS_DAYS: '1.5' }, 'RETENTION_EMAILS_DAYS'],
    [{ RETENTION_WEBHOOK_DELIVERIES_DAYS: '0' }, 'RETENTION_WEBHOOK_DELIVERIES_DAYS'],
    [{ RETENTION_PROCESSOR_EVENTS_DAYS: '3' }, 'RETENTION_PROCESSOR_EVENTS_DAYS'],
    [{ RETENTION_PARTITIONS_AHEAD_DAYS: '1' }, 'RETENTION_PARTITIONS_AHEAD_DAYS'],
    [{ RETENTION_PARTITIONS_AHEAD_DAYS: '91' }, 'RETENTION_PARTITIONS_AHEAD_DAYS'],
  ])('when %o is set, then the configuration is refused naming the setting', (env, message) => {
    expect(() => loadConfig(env)).toThrow(`invalid configuration: ${message}`);
  });
});

describe('the time of an id', () => {
  it('when an id is minted, then idTime answers its millisecond, and idFloor of that millisecond sorts at or before it', () => {
    const before = Date.now();
    const id = newId('evt');
    const ms = idTime(id);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1);
    expect(idFloor('evt', ms) <= id).toBe(true);
    expect(id < idFloor('evt', ms + 1)).toBe(true);
    expect(idTime(idFloor('wd', 1_795_000_000_123))).toBe(1_795_000_000_123);
  });
});
