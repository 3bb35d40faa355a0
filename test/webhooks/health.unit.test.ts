import { describe, expect, it } from 'vitest';
import { dueAction, warningLeadMs } from '../../src/webhooks/health.ts';
import { healthStatus } from '../../src/webhooks/presenter.ts';

const DAY = 24 * 3600 * 1000;
const h = { windowMs: 5 * DAY, minFailures: 10 };
const now = Date.UTC(2026, 10, 26);
const run = (ago: number, failed: number, o: { warned?: boolean; active?: boolean } = {}) => ({
  is_active: o.active ?? true,
  failing_since: new Date(now - ago),
  failed_attempts: failed,
  failure_warned_at: o.warned ? new Date(now) : null,
});

describe('endpoint health rules', () => {
  it('when a run of failures is older than the window with enough failures, then the endpoint is to be disabled', () => {
    expect(dueAction(run(5 * DAY, 10), h, now)).toBe('disable');
    expect(dueAction(run(6 * DAY, 50, { warned: true }), h, now)).toBe('disable');
  });

  it('when too few attempts failed (one bad burst), then nothing happens, however old the run', () => {
    expect(dueAction(run(9 * DAY, 9), h, now)).toBeNull();
  });

  it('when the run is within a day of the window, then the warning is due once', () => {
    expect(dueAction(run(4 * DAY, 10), h, now)).toBe('warn');
    expect(dueAction(run(4 * DAY, 10, { warned: true }), h, now)).toBeNull();
    expect(dueAction(run(4 * DAY - 1, 10), h, now)).toBeNull();
  });

  it('when the endpoint is already inactive or healthy, then nothing is due', () => {
    expect(dueAction(run(6 * DAY, 10, { active: false }), h, now)).toBeNull();
    expect(dueAction({ is_active: true, failing_since: null, failed_attempts: 0, failure_warned_at: null }, h, now)).toBeNull();
  });

  it('when the window is shortened, then the warning lead scales to a fifth of it; longer windows keep one day', () => {
    expect(warningLeadMs(4000)).toBe(800);
    expect(warningLeadMs(5 * DAY)).toBe(DAY);
    expect(warningLeadMs(30 * DAY)).toBe(DAY);
  });

  it('when the service disabled an endpoint, then it is disabled; a merchant pause keeps the health it had', () => {
    expect(healthStatus({ is_active: false, failing_since: new Date(), disabled_at: new Date() })).toBe('disabled');
    expect(healthStatus({ is_active: false, failing_since: new Date(), disabled_at: null })).toBe('failing');
    expect(healthStatus({ is_active: true, failing_since: null, disabled_at: null })).toBe('healthy');
  });
});
