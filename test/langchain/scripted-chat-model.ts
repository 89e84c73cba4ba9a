import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessageChunk, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';

/**
 * One scripted answer: a message (with what it reports as the whole run's token usage), or an
 * error the model call fails with.
 */
export type ScriptedReply =
  | {
      message: AIMessage;
      tokenUsage?: { promptTokens: number; completionTokens: number; totalTokens: number };
    }
  | { error: Error };

/**
 * A chat model that answers with scripted `AIMessage`s in turn (tool calls included), or fails
 * with a scripted error, for agents run offline. `bindTools` keeps the tools in its invocation
 * parameters, as a real provider's model does, and it names its model `scripted-1`.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly #replies: ScriptedReply[];
  readonly #tools: ReturnType<typeof convertToOpenAITool>[];

  constructor(replies: ScriptedReply[], tools: ReturnType<typeof convertToOpenAITool>[] = []) {
    super({});
    this.#replies = replies;
    this.#tools = tools;
  }

  _llmType(): string {
    return 'scripted';
  }

  override invocationParams(): Record<string, unknown> {
    return this.#tools.length === 0
      ? { model: 'scripted-1' }
      : { model: 'scripted-1', tools: this.#tools };
  }

  override bindTools(tools: BindToolsInput[]): ScriptedChatModel {
    const Model = this.constructor as typeof ScriptedChatModel;
    return new Model(
      this.#replies,
      tools.map((tool) => convertToOpenAITool(tool)),
    );
  }

  _generate(_messages: BaseMessage[], _options: this['ParsedCallOptions']): Promise<ChatResult> {
    return Promise.resolve().then(() => {
      const { message, tokenUsage } = this.nextAnswer();
      return {
        generations: [{ message, text: '' }],
        llmOutput: tokenUsage === undefined ? {} : { tokenUsage },
      };
    });
  }

  /** The next scripted answer; throws the scripted error, or when no reply is left. */
  protected nextAnswer(): Exclude<ScriptedReply, { error: Error }> {
    const reply = this.#replies.shift();
    if (reply === undefined) throw new Error('the scripted model has no reply left');
    if ('error' in reply) throw reply.error;
    return reply;
  }
}

/**
 * A {@link ScriptedChatModel} that streams each reply's text word by word, a macrotask apart,
 * when LangChain streams (`.stream()`, a graph streamed with `streamMode: 'messages'`), telling
 * its run manager of each chunk (`handleLLMNewToken`) as a provider's model does.
 */
export class StreamingScriptedChatModel extends ScriptedChatModel {
  override async *_streamResponseChunks(
    _messages: BaseMessage[],
    _options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const { message } = this.nextAnswer();
    for (const word of message.text.split(/(?<= )/)) {
      await new Promise((resolve) => setImmediate(resolve));
      const chunk = new ChatGenerationChunk({
        text: word,
        message: new AIMessageChunk({ content: word }),
      });
      await runManager?.handleLLMNewToken(word, undefined, undefined, undefined, undefined, {
        chunk,
      });
      yield chunk;
    }
  }
}
