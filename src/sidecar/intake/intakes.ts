import { fstatSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { ConfigurationError } from '../../errors/index.js';
import type { EventPipeline } from '../pipeline/index.js';
import { FollowedFile } from './followed-file.js';
import type { HttpIntakeLimits, HttpIntakeMetrics } from './http-intake-options.js';
import { HttpIntake } from './http-intake.js';
import { ClientTokens, type ClientToken } from './client-tokens.js';
import { isLoopbackHost, type ListenAddress } from './listen-address.js';
import { ReadAheadFile } from './read-ahead-file.js';
import { RefusalLog } from './refusal-log.js';
import { StdinSource } from './stdin-source.js';

/** The sources the sidecar's settings chose, and their limits. */
export interface IntakeSettings extends HttpIntakeLimits {
  /** Read standard input (`options.input`, else the process's). */
  stdin: boolean;
  input?: Readable;
  files: readonly string[];
  /** The checkpoint of the (single) followed file. */
  checkpoint?: string | undefined;
  /** Ignore the stored checkpoint and read the file from the start. */
  checkpointReset?: boolean;
  checkpointIntervalMs: number;
  listen: readonly ListenAddress[];
  /** Bearer tokens for `POST /v1/events`, each naming a client. */
  tokens: readonly ClientToken[];
  /** A file of `NAME=SECRET` lines, read at start-up and by {@link Intakes.reloadTokens}. */
  tokenFile?: string | undefined;
}

/** Options for {@link Intakes.open}: the settings, and what the sources feed and ask. */
export interface IntakesOptions extends IntakeSettings {
  pipeline: EventPipeline;
  /** While true, reading pauses and HTTP answers 429. */
  isFull: () => boolean;
  /** Whether the sidecar takes events (`/readyz`). */
  isReady: () => boolean;
  /** Events the tracer holds for a missing invoke (the checkpoint waits for them). */
  heldEvents: () => number;
  renderMetrics: () => string;
  /** Where the HTTP intake counts refusals and connections. */
  metrics?: HttpIntakeMetrics;
  /** Standard input ended and it was the only source. */
  onOnlyInputEnded: () => void;
  log: (line: string) => void;
}

/**
 * The intake room: standard input, followed files with their checkpoints and HTTP listeners,
 * opened together and stopped together. Every source pauses while the export queue is full and
 * reads on when {@link resume} is called.
 */
export class Intakes {
  readonly #files: FollowedFile[];
  readonly #listeners: HttpIntake[];
  readonly #stdin: StdinSource | undefined;
  readonly #tokens: ClientTokens;

  private constructor(
    files: FollowedFile[],
    listeners: HttpIntake[],
    options: IntakesOptions,
    tokens: ClientTokens,
    input: Readable | undefined,
  ) {
    this.#tokens = tokens;
    this.#files = files;
    this.#listeners = listeners;
    const onlyStdin = files.length === 0 && listeners.length === 0;
    this.#stdin =
      input !== undefined
        ? new StdinSource({
            ...options,
            input,
            onEnd: () => {
              if (onlyStdin) options.onOnlyInputEnded();
            },
          })
        : undefined;
  }

  /**
   * Reads checkpoints, binds every listen address and starts reading. A listen address that
   * cannot be bound closes what was opened and throws a {@link ConfigurationError}.
   */
  static async open(options: IntakesOptions): Promise<Intakes> {
    // Standard input is looked at before anything is opened: refusing it closes nothing.
    const input = options.stdin ? (options.input ?? standardInput()) : undefined;
    // Each file gets the checkpoint settings, isFull, heldEvents and log as the room was given.
    const files = await Promise.all(
      options.files.map((path) => FollowedFile.open({ ...options, path })),
    );
    const tokens = await ClientTokens.load(options.tokens, options.tokenFile);
    const listeners: HttpIntake[] = [];
    // One log for every listener: a client refused on two addresses is logged once.
    const refusals = new RefusalLog(options.log);
    try {
      for (const address of options.listen) {
        listeners.push(
          // The limits, isFull, isReady, renderMetrics and metrics as the room was given them.
          await HttpIntake.start({
            ...options,
            host: address.host,
            port: address.port,
            tokens,
            protectMetrics: !isLoopbackHost(address.host),
            ingest: (body, client) =>
              options.pipeline.ingestBody(body, 'http', client, options.isFull),
            refusals,
          }),
        );
      }
    } catch (error) {
      await Promise.all(listeners.map((listener) => listener.close(0)));
      throw new ConfigurationError(`cannot listen: ${(error as Error).message}`, {
        setting: '--listen',
        cause: error,
      });
    }
    const intakes = new Intakes(files, listeners, options, tokens, input);
    for (const file of files) file.start();
    for (const listener of listeners)
      options.log(`tooltrace sidecar: listening on ${listener.url}`);
    return intakes;
  }

  /** Base URLs of the HTTP listeners, with real ports. */
  get urls(): string[] {
    return this.#listeners.map((listener) => listener.url);
  }

  /** Spans the followed files' checkpoints wait for. */
  get pinnedSpans(): number {
    return this.#files.reduce((sum, file) => sum + file.pinnedSpans, 0);
  }

  /**
   * Reads `--token-file` again (SIGHUP): resolves with the number of tokens now accepted, or
   * rejects with a `ConfigurationError` and keeps the tokens in use.
   */
  reloadTokens(): Promise<number> {
    return this.#tokens.reload();
  }

  /** Reads on where reading paused for a full queue. */
  resume(): void {
    for (const file of this.#files) file.poke();
    this.#stdin?.resume();
  }

  /** Stops every source: no new connections (those open get `graceMs`), no more reading. */
  async stop(graceMs: number): Promise<void> {
    await Promise.all([
      ...this.#listeners.map((listener) => listener.close(graceMs)),
      ...this.#files.map((file) => file.stop()),
    ]);
    this.#stdin?.stop();
    for (const listener of this.#listeners) listener.stopIngesting();
  }

  /** Writes every checkpoint (it stays at the first call not exported yet). */
  async saveCheckpoints(): Promise<void> {
    await Promise.all(this.#files.map((file) => file.saveFinalCheckpoint()));
  }
}

/** Bytes per read when standard input is a regular file (`tooltrace sidecar --stdin < journal`). */
const FILE_READ_BYTES = 1024 * 1024;

/**
 * Standard input as a stream. When it is a regular file, a {@link ReadAheadFile} that reads 1 MiB
 * at a time rather than `process.stdin`'s 64 KiB (a one-shot export of a journal then takes a
 * sixteenth of the reads and event-loop turns), each read started before the chunk before it is
 * replayed.
 */
function standardInput(): Readable {
  let info;
  try {
    info = fstatSync(0);
  } catch {
    // No usable descriptor 0: let process.stdin decide what standard input is.
    return process.stdin;
  }
  if (info.isFile()) return new ReadAheadFile(0, FILE_READ_BYTES);
  if (info.isDirectory()) {
    // Read as a stream it ends at once, and the sidecar would exit 0 having read nothing.
    throw new ConfigurationError(
      '--stdin: standard input is a directory; redirect a journal file or a pipe into it',
      { setting: '--stdin' },
    );
  }
  return process.stdin;
}
