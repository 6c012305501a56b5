/**
 * What the report's browser test (test/integration/local-smoke.test.ts, "report.html … in headless
 * Chromium") needs to drive Debian's Chromium through playwright-core: the arguments of a headless,
 * sandbox-free, offline start, the part of a DOM element its page functions use, and how much of a
 * screenshot is ink.
 */
import type { Page } from 'playwright-core';

/** Headless, no sandbox (root in CI), nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const VIEWPORT = { width: 1280, height: 1000 };

/**
 * The part of a DOM element the page functions use. The project compiles without the DOM lib (it
 * is node code), so playwright's element types do not resolve in the tests.
 */
export interface PageElement {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { readonly length: number };
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { readonly width: number };
}

/** Share of pixels that are not (near) white, and how many distinct colours, decoded by the browser itself. */
export async function inkOf(page: Page, png: Buffer): Promise<{ inked: number; colours: number }> {
  return page.evaluate(async (b64: string) => {
    // Runs in the page; the project compiles without the DOM lib, so name the few browser APIs used.
    interface Img {
      src: string;
      width: number;
      height: number;
      decode(): Promise<void>;
    }
    interface Ctx {
      drawImage(img: Img, x: number, y: number): void;
      getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
    }
    interface Canvas {
      width: number;
      height: number;
      getContext(kind: '2d'): Ctx | null;
    }
    const browser = globalThis as unknown as {
      Image: new () => Img;
      document: { createElement(tag: 'canvas'): Canvas };
    };
    const img = new browser.Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = browser.document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2d context');
    ctx.drawImage(img, 0, 0);
    const { data } = ctx.getImageData(0, 0, img.width, img.height);
    let inked = 0;
    const colours = new Set<number>();
    for (let i = 0; i < data.length; i += 4) {
      const r = data[i]!;
      const g = data[i + 1]!;
      const b = data[i + 2]!;
      if (255 * 3 - (r + g + b) > 60) inked++;
      colours.add((r << 16) | (g << 8) | b);
    }
    return { inked: inked / (data.length / 4), colours: colours.size };
  }, png.toString('base64'));
}
