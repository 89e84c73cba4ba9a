/**
 * A redaction hook: gets the name of what is being captured (an attribute key such as
 * `gen_ai.tool.call.arguments`) and its text, already truncated, and returns the text to record.
 */
export type RedactHook = (key: string, value: string) => string;

const MASK = '[REDACTED]';

/**
 * What {@link redactCredentials} masks, each with the replacement that keeps the text readable:
 * the label stays, the secret goes.
 */
const RULES: readonly (readonly [RegExp, string])[] = [
  // HTTP Authorization headers, whatever the scheme.
  [/\b((?:proxy-)?authorization)(\s*[:=]\s*)("?)[^\r\n"]+/gi, `$1$2$3${MASK}`],
  // Bearer and Basic credentials outside a header.
  [/\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1$2${MASK}`],
  // JSON members whose name says secret: "password": "…", "api_key": "…".
  [
    /("(?:[\w-]*(?:password|passwd|secret|token(?!s)|api[_-]?key|apikey|credential|private[_-]?key)[\w-]*)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi,
    `$1"${MASK}"`,
  ],
  // key=value and key: value pairs: password=…, token=…, api_key=…, client_secret: ….
  [
    /\b([\w-]*(?:password|passwd|pwd|secret|token(?!s)|api[_-]?key|apikey|credential)[\w-]*)(\s*[=:]\s*)(?!"?\[REDACTED\])(?:"[^"\r\n]*"|'[^'\r\n]*'|[^\s"'&,;]+)/gi,
    `$1$2${MASK}`,
  ],
  // Provider API keys: OpenAI/Anthropic style sk-…, GitHub tokens, AWS access key ids, Slack.
  [/\bsk-[A-Za-z0-9_-]{8,}/g, `sk-${MASK}`],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, MASK],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, MASK],
  // JSON Web Tokens.
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, MASK],
  // Credentials in URLs: scheme://user:password@host.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi, `$1${MASK}@`],
];

/** A quick test that lets text without any hint of a credential skip every rule. */
const HINT =
  /authorization|bearer|basic|passw|pwd|secret|token|api[_-]?key|apikey|credential|private|sk-|gh[pousr]_|github_pat|AKIA|ASIA|xox|eyJ|:\/\//i;

/**
 * The default redaction: masks values that look like credentials — `Authorization` headers,
 * bearer and basic credentials, `sk-…` API keys, GitHub, AWS and Slack tokens, JSON Web Tokens,
 * passwords in URLs, and `password=` / `token=` / `api_key=` / `"secret": "…"` pairs — with
 * `[REDACTED]`, keeping the label so the text stays readable. Pattern-based, so it is a safety
 * net, not a guarantee: pass your own `redact` for data you know.
 */
export function redactCredentials(_key: string, value: string): string {
  if (!HINT.test(value)) return value;
  let result = value;
  for (const [pattern, replacement] of RULES) result = result.replace(pattern, replacement);
  return result;
}
