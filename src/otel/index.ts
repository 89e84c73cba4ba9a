/** Entry point `tooltrace/otel`: the version of the package, until its API lands. */
export { VERSION } from '../version.js';
