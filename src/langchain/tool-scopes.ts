import type { EventBus, ScopeRunner } from '../bus/index.js';

/**
 * What the callback handler and `traceLangChainTools` share for one bus: the scope each
 * open tool run's code should run in (the context of its `tool.invoke` handler, where its
 * `execute_tool` span is active), by LangChain run id, and the descriptions of the tools the
 * wrapper saw, by name. A LangChain callback is told about a run but cannot make the run's code
 * run anywhere; the wrapped tool asks here for the scope its run was given.
 */
interface BusTools {
  readonly scopes: Map<string, ScopeRunner>;
  readonly descriptions: Map<string, string>;
}

/** Tool descriptions remembered per bus at most; tools past it are described by the model's request. */
const MAX_DESCRIPTIONS = 1024;

const perBus = new WeakMap<EventBus, BusTools>();

function toolsOf(bus: EventBus): BusTools {
  let tools = perBus.get(bus);
  if (tools === undefined) {
    tools = { scopes: new Map(), descriptions: new Map() };
    perBus.set(bus, tools);
  }
  return tools;
}

/** Notes the scope the code of tool run `runId` runs in, until {@link releaseToolScope}. */
export function holdToolScope(bus: EventBus, runId: string, runner: ScopeRunner): void {
  toolsOf(bus).scopes.set(runId, runner);
}

/** Forgets the scope of tool run `runId` (it ended, or the handler forgot it). */
export function releaseToolScope(bus: EventBus, runId: string): void {
  perBus.get(bus)?.scopes.delete(runId);
}

/** The scope the code of tool run `runId` runs in, when the handler opened its span. */
export function toolScopeOf(bus: EventBus, runId: string): ScopeRunner | undefined {
  return perBus.get(bus)?.scopes.get(runId);
}

/** Remembers what tool `name` does, for the `tool.invoke` of its runs. */
export function describeTool(bus: EventBus, name: string, description: string): void {
  const descriptions = toolsOf(bus).descriptions;
  if (descriptions.size >= MAX_DESCRIPTIONS && !descriptions.has(name)) return;
  descriptions.set(name, description);
}

/** What tool `name` does, when `traceLangChainTools` wrapped it for `bus`. */
export function toolDescriptionOf(bus: EventBus, name: string): string | undefined {
  return perBus.get(bus)?.descriptions.get(name);
}
