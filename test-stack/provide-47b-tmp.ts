import type { TestProject } from 'vitest/node';
export default function setup(project: TestProject): void {
  project.provide('stackBinaries', {
    collector: '/root/.cache/tooltrace/stack/otelcol-0.161.0-b1e5bd054d52/otelcol-tooltrace',
    jaeger: '/root/.cache/tooltrace/stack/jaeger-v1.75.0/jaeger',
    prometheus: '/nonexistent',
  } as never);
}
