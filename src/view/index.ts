/**
 * `tooltrace view`: a journal (or an OTLP JSON file) turned into spans through the sidecar's own
 * pipeline and tracer wiring, and drawn as a waterfall, a summary and an HTML page.
 */
export { runView } from './run-view.js';
export type { ViewFilter, ViewOptions } from './run-view.js';
export { readJournalSpans } from './read-journal-spans.js';
export type { JournalSpans, ReadJournalOptions, ReadProgress } from './read-journal-spans.js';
export { renderWaterfall, formatDuration } from './waterfall.js';
export type { WaterfallOptions } from './waterfall.js';
export { terminalWidth } from './terminal-width.js';
export { InFlightSnapshots } from './in-flight-snapshots.js';
export { formatToolTable } from './tool-table.js';
export type { ToolTableRow } from './tool-table.js';
