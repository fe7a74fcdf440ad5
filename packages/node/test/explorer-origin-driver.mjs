// Types URIs that name another host into the explorer's URI box, in a real headless
// Chromium, and prints the requests the page tried to send elsewhere and what it showed.
// Usage: node explorer-origin-driver.mjs <chromium> <page url> <key> <uri>...
import puppeteer from 'puppeteer-core';

const [executablePath, url, key, ...uris] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const seen = { foreign: [], statuses: [] };
try {
  const page = await browser.newPage();
  const origin = new URL(url).origin;
  page.on('request', (r) => {
    if (!r.url().startsWith(origin)) seen.foreign.push({ url: r.url(), authorization: r.headers().authorization ?? null });
  });
  await page.goto(url);
  await page.type('#key', key);
  await page.click('#keyform button');
  await page.waitForSelector('.res button.name');
  for (const uri of uris) {
    await page.$eval('#status', (e) => (e.textContent = ''));
    await page.$eval('#uri', (e, v) => (e.value = v), uri);
    await page.click('#run');
    await page.waitForFunction(() => /^(Failed|Rows|No entities)/.test(document.getElementById('status').textContent), { timeout: 10000 });
    seen.statuses.push(await page.$eval('#status', (e) => e.textContent));
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
