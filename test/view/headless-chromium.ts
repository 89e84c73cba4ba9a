import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** What headless Chromium made of a page: its DOM after the scripts ran, and its console. */
export interface RenderedPage {
  dom: string;
  /** Console messages and uncaught errors, one per line, as Chromium logs them. */
  console: string[];
}

const NAMES = ['chromium', 'chromium-browser', 'google-chrome'];

/**
 * The Chromium binary on PATH. Missing, this throws (the test fails, it is not skipped): the
 * HTML page is only tested in a real browser, and `.ci/run` installs Debian's `chromium`.
 */
export function chromiumPath(): string {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of NAMES) {
      const path = join(directory, name);
      if (existsSync(path)) return path;
    }
  }
  throw new Error(
    'chromium is not installed: the HTML page is tested in a real headless browser; ' +
      'install it with `apt-get update && apt-get install -y chromium` (as .ci/run does)',
  );
}

/** Flags for a headless run as root in a container: no sandbox, no GPU, nothing fetched. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-extensions',
  '--disable-background-networking',
  '--hide-scrollbars',
  '--enable-logging=stderr',
  '--v=0',
];

function run(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      chromiumPath(),
      [...FLAGS, ...args],
      { maxBuffer: 64 * 1024 * 1024, timeout: 60_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`chromium failed: ${error.message}\n${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** Opens `url` in headless Chromium and returns the DOM once its scripts ran. */
export async function renderPage(url: string): Promise<RenderedPage> {
  const { stdout, stderr } = await run(['--virtual-time-budget=5000', '--dump-dom', url]);
  return {
    dom: stdout,
    console: stderr.split('\n').filter((line) => line.includes(':CONSOLE')),
  };
}

/** Opens `url` and saves a PNG of its first `width`×`height` pixels to `path`. */
export async function screenshotPage(
  url: string,
  path: string,
  width: number,
  height: number,
): Promise<void> {
  await run([
    '--virtual-time-budget=5000',
    `--window-size=${width},${height}`,
    `--screenshot=${path}`,
    url,
  ]);
}
