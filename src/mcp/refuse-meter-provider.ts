/**
 * Refuses the `meterProvider` option the MCP adapters took before their durations moved to the
 * tracer, so a program passing it learns where it went rather than losing its metrics silently.
 */
export function refuseMeterProvider(adapter: string, options: object): void {
  if ((options as { meterProvider?: unknown }).meterProvider === undefined) return;
  throw new TypeError(
    `${adapter} no longer takes meterProvider: the tracer on the bus records the MCP operation ` +
      'durations, through its own: traceToolCalls(bus, { meterProvider })',
  );
}
