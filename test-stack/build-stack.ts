import type { TestProject } from 'vitest/node';
import { buildStack, type StackBinaries } from '../scripts/stack/stack.js';

declare module 'vitest' {
  export interface ProvidedContext {
    stackBinaries: StackBinaries;
  }
}

/**
 * Global setup of the stack suite: builds (or finds cached) the Collector, Jaeger and Prometheus
 * before any test file runs, progress on stderr, and hands their paths to the files
 * (`inject('stackBinaries')`).
 */
export default async function setup(project: TestProject): Promise<void> {
  project.provide('stackBinaries', await buildStack());
}
