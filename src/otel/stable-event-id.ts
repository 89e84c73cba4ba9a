import type { BusEvent } from '../bus/index.js';
import type { ErrorReporter } from './error-reporter.js';

/**
 * The function the subscriber reads an event's id with: the `stableEventId` hook's answer (`''`
 * when it returns something that is not a string, or throws — counted as a hook failure), else
 * the bus's own id. Resolved once, so the hot path pays no check for a missing hook.
 */
export function stableEventIdReader(
  hook: ((event: BusEvent) => string) | undefined,
  errors: ErrorReporter,
): (event: BusEvent) => string {
  if (hook === undefined) return (event) => event.id;
  return (event) => {
    try {
      const id = hook(event);
      return typeof id === 'string' ? id : '';
    } catch (error) {
      errors.report('hook', error);
      return '';
    }
  };
}
