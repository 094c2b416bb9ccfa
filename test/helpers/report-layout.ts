/**
 * What a report page looks like in Chromium, measured in the page: its height, and every pair of
 * chart texts (titles, axis names, tick labels, legend entries, reference-line labels) whose boxes
 * overlap on screen. Evaluated with Chromium.evaluate (test/helpers/chromium.ts).
 */

interface TextOverlap {
  readonly chart: string;
  readonly a: string;
  readonly b: string;
}

export interface PageLayout {
  /** The page's full height in CSS pixels, collapsed sections collapsed. */
  readonly height: number;
  readonly overlaps: readonly TextOverlap[];
  /** Chart texts measured (a check that measured nothing proves nothing). */
  readonly textsMeasured: number;
}

/**
 * Two texts overlap when their boxes intersect by more than a pixel each way. Texts an axis hid
 * (ECharts' hideOverlap) or that are invisible do not count.
 */
export const LAYOUT_EXPRESSION = `(() => {
  const overlaps = [];
  let textsMeasured = 0;
  for (const fig of document.querySelectorAll('figure.chart')) {
    if (fig.closest('details:not([open])')) continue;
    const boxes = Array.from(fig.querySelectorAll('svg text'))
      .filter((t) => (t.textContent || '').trim() !== '')
      .filter((t) => {
        const s = getComputedStyle(t);
        return s.display !== 'none' && s.visibility !== 'hidden' && Number(s.opacity) > 0 &&
          Number(t.getAttribute('opacity') ?? 1) > 0;
      })
      .map((t) => ({ text: (t.textContent || '').trim(), r: t.getBoundingClientRect() }))
      .filter((b) => b.r.width > 0 && b.r.height > 0);
    textsMeasured += boxes.length;
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i].r, b = boxes[j].r;
        const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (dx > 1 && dy > 1) overlaps.push({ chart: fig.id, a: boxes[i].text, b: boxes[j].text });
      }
  }
  return { height: document.documentElement.scrollHeight, overlaps, textsMeasured };
})()`;
