// Drives the explorer page in a real headless Chromium (puppeteer-core, an ES module that
// jest's CommonJS runtime cannot load) and prints what a user would see, as JSON.
// Usage: node explorer-driver.mjs <chromium> <page url> <download dir> [screenshot.png]
import { readdir } from 'node:fs/promises';
import puppeteer from 'puppeteer-core';

const [executablePath, url, downloads, screenshot] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const seen = {};
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 760 });
  const origin = new URL(url).origin;
  const foreign = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('blob:')) foreign.push(r.url());
  });
  page.on('pageerror', (e) => process.stderr.write(`page error: ${e.message}\n`));
  page.on('console', (m) => process.stderr.write(`page console: ${m.text()}\n`));
  const cdp = await page.createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });
  const text = (sel) => page.$eval(sel, (e) => e.textContent);
  const statusIs = (pattern) =>
    page
      .waitForFunction((p) => new RegExp(p).test(document.getElementById('status').textContent), { timeout: 10000 }, pattern)
      .catch(async (e) => {
        throw new Error(
          `status never matched ${pattern}: '${await text('#status')}', error '${await text('#error')}', uri '${await page.$eval('#uri', (u) => u.value)}' (${e.message})`,
        );
      });
  const run = async (uri) => {
    await page.$eval(
      '#uri',
      (e, v) => {
        e.value = v;
      },
      uri,
    );
    await page.click('#run');
  };

  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('resources').textContent.length > 0);
  seen.withoutKey = await text('#resources');
  seen.errorWithoutKey = await text('#error');

  await page.type('#key', 'secret-key');
  await page.click('#keyform button');
  await page.waitForSelector('.res button.name');
  seen.resources = await page.$$eval('.res > button.name:first-child', (bs) => bs.map((b) => b.textContent));
  seen.personBox = await page.$$eval('.res', (rs) => rs.find((r) => r.querySelector('button').textContent === 'Person')?.textContent);

  await page.select('#size', '10');
  await run('/Person/Age>=18/order_asc=Age');
  await statusIs('^Rows 1-10$');
  seen.columns = await page.$$eval('#rows th', (ths) => ths.map((t) => t.textContent));
  seen.firstPage = await page.$$eval('#rows tr', (trs) => trs.slice(1).map((tr) => tr.children[1].textContent));
  await page.click('#next');
  await statusIs('^Rows 11-');
  seen.secondStatus = await text('#status');
  seen.secondPage = await page.$$eval('#rows tr', (trs) => trs.slice(1).map((tr) => tr.children[1].textContent));
  seen.nextDisabledAtEnd = await page.$eval('#next', (b) => b.disabled);
  if (screenshot) {
    await page.click('#prev');
    await statusIs('^Rows 1-10$');
    await page.screenshot({ path: screenshot });
  }

  await run('/Person/Nope=1');
  await page.waitForSelector('#error-record');
  seen.error = await text('#error');
  await page.click('#error-record');
  await page.waitForFunction(() => document.getElementById('uri').value.includes('Service.Admin.Error'));
  await statusIs('^Rows 1-1$|^Rows');
  seen.errorRecordUri = await page.$eval('#uri', (e) => e.value);
  seen.errorRecordColumns = await page.$$eval('#rows th', (ths) => ths.map((t) => t.textContent));

  await run('/Person/Name=R%26D');
  await statusIs('^Rows 1-1$');
  seen.encodedValue = await page.$$eval('#rows td', (tds) => tds.map((t) => t.textContent));

  await run('/Person/Age>=18');
  await statusIs('^Rows');
  await page.click('#excel');
  await statusIs('^Downloaded .*xlsx');
  await page.click('#jsonl');
  await statusIs('^Downloaded .*jsonl');
  seen.downloadStatus = await text('#status');
  for (let i = 0; i < 50 && (await readdir(downloads)).filter((f) => !f.endsWith('.crdownload')).length < 2; i++)
    await new Promise((r) => setTimeout(r, 100));
  seen.downloads = (await readdir(downloads)).sort();

  seen.chartBox = await page.$$eval('.res', (rs) => rs.find((r) => r.querySelector('button').textContent === 'Chart.Png')?.textContent);
  await run('/Chart.Png/Size=2');
  await statusIs('^Save image/png');
  seen.binaryStatus = await text('#status');
  await page.waitForFunction(() => document.querySelector('#rows img')?.complete);
  seen.binaryImageWidth = await page.$eval('#rows img', (i) => i.naturalWidth);

  seen.storage = await page.evaluate(() => ({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie }));
  seen.foreign = foreign;
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
