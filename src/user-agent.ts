import { VERSION } from './version.js';

/** The one `User-Agent` every tooltrace transport sends: OTLP/HTTP, OTLP/gRPC, the forwarder. */
export const USER_AGENT = `tooltrace/${VERSION}`;
