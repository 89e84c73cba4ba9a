import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';

/** What a scripted reply reports as the whole run's token usage, besides its message. */
export interface ScriptedReply {
  message: AIMessage;
  tokenUsage?: { promptTokens: number; completionTokens: number; totalTokens: number };
}

/**
 * A chat model that answers with scripted `AIMessage`s in turn (tool calls included), for
 * agents run offline. `bindTools` keeps the tools in its invocation parameters, as a real
 * provider's model does, and it names its model `scripted-1`.
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
    return new ScriptedChatModel(
      this.#replies,
      tools.map((tool) => convertToOpenAITool(tool)),
    );
  }

  _generate(_messages: BaseMessage[], _options: this['ParsedCallOptions']): Promise<ChatResult> {
    const reply = this.#replies.shift();
    if (reply === undefined) {
      return Promise.reject(new Error('the scripted model has no reply left'));
    }
    return Promise.resolve({
      generations: [{ message: reply.message, text: '' }],
      llmOutput: reply.tokenUsage === undefined ? {} : { tokenUsage: reply.tokenUsage },
    });
  }
}
