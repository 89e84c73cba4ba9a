import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** What the limiter reports (a subset of the intake's metrics). */
export interface ConnectionObserver {
  httpConnections(delta: 1 | -1): void;
  httpConnectionDropped(reason: 'evicted' | 'turned_away'): void;
}

/**
 * Holds a server to at most `maxConnections` open connections without letting idle ones lock
 * the door: when a connection arrives at the limit, the oldest connection with no request in
 * progress (idle keep-alive, or one that never finished sending its headers) is closed to make
 * room; only when every connection is busy is the newcomer turned away. A neighbour opening
 * hundreds of idle connections therefore cannot stop a client that sends requests, and file
 * descriptors stay bounded.
 */
export class ConnectionLimiter {
  readonly #maxConnections: number;
  /** Open connections, oldest first (a `Set` keeps insertion order). */
  readonly #open = new Set<Socket>();
  readonly #busy = new Set<Socket>();
  readonly #observer: ConnectionObserver | undefined;
  #evicted = 0;
  #turnedAway = 0;

  constructor(server: Server, maxConnections: number, observer?: ConnectionObserver) {
    this.#maxConnections = maxConnections;
    this.#observer = observer;
    server.on('connection', (socket: Socket) => this.#admit(socket));
  }

  /** Connections open now. */
  get open(): number {
    return this.#open.size;
  }

  /** Idle connections closed to make room, and connections refused because all were busy. */
  get closed(): { evicted: number; turnedAway: number } {
    return { evicted: this.#evicted, turnedAway: this.#turnedAway };
  }

  /** A request on `socket` started: it is not closed to make room until {@link idle}. */
  busy(socket: Socket): void {
    if (this.#open.has(socket)) this.#busy.add(socket);
  }

  /** The request on `socket` was answered. */
  idle(socket: Socket): void {
    this.#busy.delete(socket);
  }

  #admit(socket: Socket): void {
    if (this.#open.size >= this.#maxConnections) {
      const idle = this.#oldestIdle();
      if (idle === undefined) {
        this.#turnedAway += 1;
        this.#observer?.httpConnectionDropped('turned_away');
        socket.destroy();
        return;
      }
      this.#evicted += 1;
      this.#observer?.httpConnectionDropped('evicted');
      this.#forget(idle);
      idle.destroy();
    }
    this.#open.add(socket);
    this.#observer?.httpConnections(1);
    socket.once('close', () => this.#forget(socket));
  }

  #oldestIdle(): Socket | undefined {
    for (const socket of this.#open) if (!this.#busy.has(socket)) return socket;
    return undefined;
  }

  #forget(socket: Socket): void {
    if (!this.#open.delete(socket)) return;
    this.#observer?.httpConnections(-1);
    this.#busy.delete(socket);
  }
}
