import { tool } from '@langchain/core/tools';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventBus } from '../../src/bus/index.js';
import { traceLangChainTools } from '../../src/langchain/index.js';

const echo = tool(({ text }) => Promise.resolve(`echo ${text}`), {
  name: 'echo',
  description: 'Echoes',
  schema: z.object({ text: z.string() }),
});

describe('traceLangChainTools()', () => {
  it('returns tools that answer as the originals do without a handler, leaving the originals and plain definitions as they are', async () => {
    const definition = { name: 'lookup', description: 'Looks up', schema: z.object({}) };
    const [traced, kept] = traceLangChainTools([echo, definition], new EventBus());

    expect(traced).not.toBe(echo);
    expect(kept).toBe(definition);
    expect(traced.name).toBe('echo');
    expect(traced.description).toBe('Echoes');
    await expect(traced.invoke({ text: 'hi' })).resolves.toBe('echo hi');
    expect(Object.hasOwn(echo, '_call')).toBe(false);
  });

  it('refuses what is not an array of tools or not a bus, saying which', () => {
    expect(() => traceLangChainTools({ echo } as unknown as [], new EventBus())).toThrow(
      'tools must be an array of LangChain tools',
    );
    expect(() => traceLangChainTools([echo], {} as EventBus)).toThrow('bus must be an EventBus');
  });
});
