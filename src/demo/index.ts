export { runDemo } from './run-demo.js';
export type { DemoOptions } from './run-demo.js';
export { DEMO_CALL_COUNT, DEMO_CALLS, DEMO_SPAN_COUNT, runDemoAgent } from './demo-agent.js';
