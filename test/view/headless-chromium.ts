import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser } from 'puppeteer-core';

/** What headless Chromium made of a page: its DOM after the scripts ran, and its console. */
export interface RenderedPage {
  dom: string;
  /** Console messages and uncaught errors, one per line. */
  console: string[];
}

/**
 * A real headless Chromium for the page tests. The browser comes from the npm registry
 * (`@sparticuz/chromium` ships a Chromium build inside its tarball, unpacked to the temporary
 * directory on first use) and is driven by `puppeteer-core`, so `npm test` needs no system
 * package: a machine with Node and npm is enough.
 */
export class HeadlessChromium {
  readonly #browser: Browser;

  private constructor(browser: Browser) {
    this.#browser = browser;
  }

  /** Unpacks (once per machine) and starts the browser. */
  static async launch(): Promise<HeadlessChromium> {
    const browser = await puppeteer.launch({
      executablePath: await chromium.executablePath(),
      args: chromium.args,
      headless: 'shell',
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
