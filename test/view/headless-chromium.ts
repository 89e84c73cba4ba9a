import { createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { brotliDecompress, createBrotliDecompress } from 'node:zlib';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser } from 'puppeteer-core';

/** What headless Chromium made of a page: its DOM after the scripts ran, and its console. */
export interface RenderedPage {
  dom: string;
  /** Console messages and uncaught errors, one per line. */
  console: string[];
}

/** Where the browser was unpacked, and what its process needs in its environment. */
interface UnpackedChromium {
  executablePath: string;
  env: Record<string, string>;
}

/**
 * A real headless Chromium for the page tests. The browser comes from the npm registry
 * (`@sparticuz/chromium` ships a Chromium build inside its tarball) and is driven by
 * `puppeteer-core`, so `npm test` needs no system package: a machine with Node and npm is enough.
 *
 * The helper unpacks the tarball's files itself rather than through `chromium.executablePath()`,
 * which falls short here twice: it unpacks the shared libraries the binary links against
 * (`libnss3`, `libnspr4`, `libnssutil3`, `libexpat`, in `bin/al2023.tar.br`) only when
 * `AWS_EXECUTION_ENV` or the like says it runs on AWS, so on a machine without them the browser
 * fails to start (`Code: 127 … libnspr4.so`); and it reuses whatever `/tmp/chromium` holds, a
 * binary of another version included. Here everything goes into
 * `os.tmpdir()/tooltrace-chromium-<package version>` (unpacked once, into a scratch directory
 * renamed into place when complete, so two test workers never see half a browser), and the
 * browser's process alone gets `LD_LIBRARY_PATH` (the libraries) and `FONTCONFIG_PATH` (the
 * package's fonts): the test process's own environment is left as it is.
 */
export class HeadlessChromium {
  readonly #browser: Browser;

  private constructor(browser: Browser) {
    this.#browser = browser;
  }

  /** Unpacks (once per machine and package version) and starts the browser. */
  static async launch(): Promise<HeadlessChromium> {
    const unpacked = await unpackChromium();
    const browser = await puppeteer.launch({
      executablePath: unpacked.executablePath,
      args: chromium.args,
      headless: 'shell',
      env: { ...process.env, ...unpacked.env },
    });
    return new HeadlessChromium(browser);
  }

  /** Opens `url` and returns the DOM once its scripts ran, with what it logged. */
  async render(url: string): Promise<RenderedPage> {
    const page = await this.#browser.newPage();
    const messages: string[] = [];
    page.on('console', (message) => messages.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => messages.push(`uncaught: ${String(error)}`));
    try {
      await page.goto(url, { waitUntil: 'load' });
      return { dom: await page.content(), console: messages };
    } finally {
      await page.close();
    }
  }

  /** Opens `url` in a `width`×`height` window and saves a PNG of it to `path`. */
  async screenshot(url: string, path: string, width: number, height: number): Promise<void> {
    const page = await this.#browser.newPage();
    try {
      await page.setViewport({ width, height });
      await page.goto(url, { waitUntil: 'load' });
      await page.screenshot({ path });
    } finally {
      await page.close();
    }
  }

  /** Stops the browser. */
  async close(): Promise<void> {
    await this.#browser.close();
  }
}

/** Written last into a complete unpacking: a directory without it is not used. */
const COMPLETE = '.complete';

/**
 * The package's `bin/` unpacked into a directory named by its version: `chromium`, the
 * SwiftShader libraries beside it (where Chromium looks for them), `lib/` (`al2023.tar.br`),
 * `fonts/` and a `fonts.conf` naming them (the package's own names `/tmp/fonts`).
 */
async function unpackChromium(): Promise<UnpackedChromium> {
  // The package's `exports` map has no `./package.json`: find its root from its entry point.
  const entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  let root = dirname(entry);
  let version: string | undefined;
  while (version === undefined) {
    // `build/cjs/package.json` only says `"type"`: the root's names the package.
    const manifest = await readFile(join(root, 'package.json'), 'utf8').catch(() => '{}');
    const { name, version: found } = JSON.parse(manifest) as { name?: string; version?: string };
    if (name === '@sparticuz/chromium' && found !== undefined) version = found;
    else if (dirname(root) === root) throw new Error(`no package root above ${entry}`);
    else root = dirname(root);
  }
  const bin = join(root, 'bin');
  const directory = join(tmpdir(), `tooltrace-chromium-${version}`);
  if (!(await exists(join(directory, COMPLETE)))) {
    const scratch = await mkdtemp(`${directory}.unpacking-`);
    try {
      await pipeline(
        createReadStream(join(bin, 'chromium.br')),
        createBrotliDecompress(),
        createWriteStream(join(scratch, 'chromium'), { mode: 0o700 }),
      );
      for (const archive of ['al2023.tar.br', 'fonts.tar.br', 'swiftshader.tar.br']) {
        await extractTar(
          await promisify(brotliDecompress)(await readFile(join(bin, archive))),
          scratch,
        );
      }
      await writeFile(
        join(scratch, 'fonts.conf'),
        `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
          `  <dir>${join(directory, 'fonts')}</dir>\n` +
          `  <cachedir>${join(directory, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
      );
      await writeFile(join(scratch, COMPLETE), `${version}\n`);
      await rename(scratch, directory);
    } catch (error) {
      await rm(scratch, { recursive: true, force: true });
      // Another test worker unpacked the same version first: use its copy.
      if (!(await exists(join(directory, COMPLETE)))) throw error;
    }
  }
  const libraries = join(directory, 'lib');
  const inherited = process.env.LD_LIBRARY_PATH;
  return {
    executablePath: join(directory, 'chromium'),
    env: {
      LD_LIBRARY_PATH:
        inherited === undefined || inherited === '' ? libraries : `${libraries}:${inherited}`,
      FONTCONFIG_PATH: directory,
    },
  };
}

/**
 * Writes the regular files and directories of a (ustar) tar archive under `target`: all the
 * package's archives hold. Anything else (a link) is refused rather than skipped, so a new
 * package version that needs more says so.
 */
async function extractTar(archive: Buffer, target: string): Promise<void> {
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number): string =>
      header.toString('utf8', start, start + length).replace(/\0.*$/s, '');
    const prefix = field(345, 155);
    const name = prefix === '' ? field(0, 100) : `${prefix}/${field(0, 100)}`;
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156]!);
    const path = normalize(join(target, name));
    if (!path.startsWith(`${target}${sep}`)) throw new Error(`tar entry outside: ${name}`);
    const body = archive.subarray(offset + 512, offset + 512 + size);
    if (type === '0' || type === '\0') {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, body, { mode: 0o755 });
    } else if (type === '5') {
      await mkdir(path, { recursive: true });
    } else {
      throw new Error(`tar entry ${name}: type '${type}' is not extracted by this helper`);
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
