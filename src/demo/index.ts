export { runDemo } from './run-demo.js';
export type { DemoOptions } from './run-demo.js';
export { runView } from './run-view.js';
export type { ViewOptions } from './run-view.js';
export { renderWaterfall, formatDuration } from './waterfall.js';
export type { WaterfallOptions } from './waterfall.js';
export { DEMO_CALL_COUNT, DEMO_CALLS, DEMO_SPAN_COUNT, runDemoAgent } from './demo-agent.js';
