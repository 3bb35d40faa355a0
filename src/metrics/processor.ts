import type { Processor } from '../processor/types.ts';
import type { Metrics } from './definitions.ts';

/** Methods that make no call (a derivation, answered synchronously): passed through, not counted. */
const NOT_CALLS: ReadonlySet<string> = new Set<keyof Processor>(['customerIdOf']);

/**
 * The processor with every call counted (processor_calls_total: ok, or error when it threw) and
 * timed: the same object otherwise, built once by the composition root. Operations are the
 * Processor interface's method names, so the label set is bounded by the interface.
 */
export function instrumentProcessor(p: Processor, metrics: Metrics): Processor {
  const wrapped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(p)) {
    if (typeof value !== 'function' || NOT_CALLS.has(key)) {
      wrapped[key] = value;
      continue;
    }
    const labels = { processor: p.name, operation: key };
    const ok = metrics.processorCalls.labels({ ...labels, outcome: 'ok' });
    const error = metrics.processorCalls.labels({ ...labels, outcome: 'error' });
    const duration = metrics.processorCallDuration.labels(labels);
    wrapped[key] = async (...args: unknown[]) => {
      const end = duration.startTimer();
      try {
        const answer = await (value as (...a: unknown[]) => unknown).apply(p, args);
        ok.inc();
        return answer;
      } catch (err) {
        error.inc();
        throw err;
      } finally {
        end();
      }
    };
  }
  return wrapped as unknown as Processor;
}
