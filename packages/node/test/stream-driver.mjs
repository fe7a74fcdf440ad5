// A browser's own EventSource on a stream (puppeteer-core in a child process, as
// explorer-driver.mjs): the page's cookie session authenticates it, and it prints, as JSON,
// the events the page received while another user inserted rows.
// Usage: node stream-driver.mjs <chromium> <origin>
/* global EventSource -- runs in the page */
import puppeteer from 'puppeteer-core';

const [executablePath, origin] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => process.stderr.write(`page error: ${e.message}\n`));
  await page.setCookie({ name: 'session', value: 'ann', url: origin });
  await page.goto(`${origin}/page`);
  const seen = await page.evaluate(async () => {
    const got = [];
    const source = new EventSource('/api/Note.Inserted');
    source.addEventListener('Note.Inserted', (e) => got.push({ id: e.lastEventId, data: JSON.parse(e.data) }));
    await new Promise((resolve, reject) => {
      source.onopen = resolve;
      source.onerror = () => reject(new Error(`the stream failed to open (readyState ${source.readyState})`));
    });
    // Another user (the admin, by a header the app's context reads) inserts bob's row, then a mixed batch.
    const insert = (notes) =>
      fetch('/api/Note', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session': 'admin' },
        body: JSON.stringify(notes),
      });
    await insert([{ Id: 1, Owner: 'bob', Text: 'hidden' }]);
    await insert([
      { Id: 2, Owner: 'ann', Text: 'mine' },
      { Id: 3, Owner: 'bob', Text: 'hidden' },
    ]);
    for (let i = 0; i < 1000 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    source.close();
    return got;
  });
  process.stdout.write(JSON.stringify(seen));
} finally {
  await browser.close();
}
