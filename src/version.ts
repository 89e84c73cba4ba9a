import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const manifest = require('../package.json') as { version: string };

/** The version of the tooltrace package. */
export const VERSION: string = manifest.version;
