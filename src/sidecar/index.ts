/** Entry point `tooltrace/sidecar`: the version of the package, until its API lands. */
export { VERSION } from '../version.js';
