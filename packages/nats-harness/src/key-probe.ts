/// <reference lib="dom" />
// Page-side functions, run in the browser by Playwright's `page.evaluate`: when a row of the web view
// (`mesh-state ui`) appears. The CLI's browser test and the bench's measurement time a put to the screen with
// them. They use only the page's globals (`page.evaluate` sends their source, not their closure).

interface ProbedWindow {
  keySeen: Promise<number>;
}

/** In the page: `keySeen()` will resolve with the wall-clock time a link named `key` enters the page's main. */
export function watchForKey(key: string): void {
  const seen = () => Array.from(document.querySelectorAll("main a")).some((link) => link.textContent === key);
  (window as unknown as ProbedWindow).keySeen = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (!seen()) return;
      observer.disconnect();
      resolve(performance.timeOrigin + performance.now());
    });
    observer.observe(document.body, { childList: true, subtree: true });
  });
}

/** In the page: the time `watchForKey`'s link appeared (epoch milliseconds). */
export function keySeen(): Promise<number> {
  return (window as unknown as ProbedWindow).keySeen;
}
