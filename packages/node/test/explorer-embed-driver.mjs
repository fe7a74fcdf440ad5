// Drives the explorer's embed control and an OR typed into its URI box in a real headless
// Chromium (puppeteer-core), and prints what a user would see and what the server was sent, as JSON.
// Usage: node explorer-embed-driver.mjs <chromium> <page url> <api key>
import puppeteer from 'puppeteer-core';

const [executablePath, url, key] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const seen = {};
try {
  const page = await browser.newPage();
  const sent = [];
  const typed = [];
  page.on('request', (r) => {
    sent.push(new URL(r.url()).pathname);
    typed.push(r.headers()['x-resourcery-uri'] ?? null);
  });
  page.on('pageerror', (e) => process.stderr.write(`page error: ${e.message}\n`));
  const text = (sel) => page.$eval(sel, (e) => e.textContent);
  const statusIs = (pattern) =>
    page.waitForFunction((p) => new RegExp(p).test(document.getElementById('status').textContent), { timeout: 10000 }, pattern);
  const uri = () => page.$eval('#uri', (e) => e.value);
  const table = () => page.$$eval('#rows tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  const boxes = () => page.$$eval('#embed input', (is) => is.map((i) => [i.value, i.checked]));

  await page.goto(url);
  await page.type('#key', key);
  await page.click('#keyform button');
  await page.waitForSelector('.res button.name');

  // A resource without relations shows no control.
  const click = (name) =>
    page.$$eval(
      '.res > button.name',
      (bs, n) => {
        const b = bs.find((x) => x.textContent === n);
        b?.click();
        return b !== undefined;
      },
      name,
    );
  if (await click('Order')) {
    await statusIs('^Rows');
    seen.orderBoxes = await boxes();
    seen.orderControlHidden = await page.$eval('#embed', (e) => e.hidden);
  }

  await click('Customer');
  await statusIs('^Rows');
  seen.customerBoxes = await boxes();
  if (seen.customerBoxes.length === 0) {
    await browser.close();
    console.log(JSON.stringify(seen));
    process.exit(0);
  }
  await page.click('#embed input[value="Orders"]');
  await page.waitForFunction(() => document.getElementById('uri').value.includes('embed='));
  await statusIs('^Rows');
  seen.embedUri = await uri();
  seen.embedTable = await table();
  seen.checkedAfter = await boxes();
  await page.click('#embed input[value="Orders"]');
  await page.waitForFunction(() => !document.getElementById('uri').value.includes('embed='));
  await statusIs('^Rows');
  seen.uncheckedUri = await uri();

  // A typed URI with embed checks its box.
  await page.$eval('#uri', (e) => {
    e.value = '/Customer/Id=2/embed=orders&select=Name,Orders';
  });
  await page.click('#run');
  await statusIs('^Rows');
  seen.typedBoxes = await boxes();
  seen.typedTable = await table();

  // An OR typed into the URI box: what the browser sends, with the URI as typed beside it, and what comes back.
  sent.length = 0;
  typed.length = 0;
  await page.$eval('#uri', (e) => {
    e.value = '/Customer/Id=1|3';
  });
  await page.click('#run');
  await statusIs('^Rows|^No entities');
  seen.orSent = sent.filter((p) => p.includes('/Customer/'));
  seen.orTyped = typed.filter((t) => t !== null);
  seen.orStatus = await text('#status');
  seen.orTable = await table();
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
