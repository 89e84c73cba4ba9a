/** Entry point `tooltrace/testing`: the version of the package, until its API lands. */
export { VERSION } from '../version.js';
