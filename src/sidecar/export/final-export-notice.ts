import { connect } from 'node:net';

/** How long the final metrics export may take before the sidecar says it is waiting. */
const NOTICE_AFTER_MS = 1000;

/**
 * Says on the log when the final metrics export has not gone through within a second, naming
 * the endpoint and, when a plain TCP connection to it cannot be opened, why (`connect
 * ECONNREFUSED …`). The OTLP exporter retries an endpoint that does not answer until the
 * shutdown deadline, and tells why only when it gives up: a sidecar with nothing else to do
 * would otherwise sit silent for most of `--shutdown-timeout`. Timers are unref'd.
 */
export function noticeSlowFinalExport(
  url: string,
  exporting: Promise<unknown>,
  deadlineMs: number,
  log: (line: string) => void,
): void {
  let done = false;
  void exporting.finally(() => (done = true));
  const probe = connectionProblem(url, NOTICE_AFTER_MS);
  setTimeout(() => {
    void probe.then((problem) => {
      if (done) return;
      const seconds = Math.max(0, Math.round((deadlineMs - Date.now()) / 1000));
      log(
        `tooltrace sidecar: the final metrics export to ${url} has not gone through after 1 s${problem === undefined ? '' : ` (${problem})`}; retrying until the shutdown deadline, ${seconds} s from now (--shutdown-timeout)`,
      );
    });
  }, NOTICE_AFTER_MS).unref();
}

/**
 * Why a TCP connection to `url`'s host and port cannot be opened, or `undefined` when it can
 * (or `timeoutMs` passes first, or the URL names no such address).
 */
function connectionProblem(url: string, timeoutMs: number): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.resolve(undefined);
  }
  const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.unref();
    const finish = (problem: string | undefined): void => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(timeoutMs, () => finish(undefined));
    socket.once('connect', () => finish(undefined));
    socket.once('error', (error) => finish(error.message));
  });
}
