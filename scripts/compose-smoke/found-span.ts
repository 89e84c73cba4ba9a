/** What the checker reads of a span a backend returned, whatever that backend's JSON dialect. */
export interface FoundSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  /** 16 lowercase hex digits, or `''` for a root span. */
  parentSpanId: string;
  name: string;
  /** The resource's `service.name`, or `''`. */
  service: string;
  status: 'unset' | 'ok' | 'error';
  statusMessage: string;
  attributes: Record<string, string | number | boolean>;
}
