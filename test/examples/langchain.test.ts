import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

describe('examples/langchain.ts', () => {
  it('runs and prints the agent span tree: the turn, its chats with tokens, the tool with its stream and its own span under it', async () => {
    const { stdout, stderr } = await runExample('langchain.ts');
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toEqual([
      'answer: See streaming.md.',
      'invoke_agent LangGraph',
      '  chat ScriptedModel  (42 in, 9 out)',
      '  execute_tool search_docs  [tool.stream.partial, tool.stream.progress, tool.stream.partial]',
      '    rank results',
      '  chat ScriptedModel  (60 in, 5 out)',
    ]);
  });
});
