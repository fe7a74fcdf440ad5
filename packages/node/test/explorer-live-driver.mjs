// Drives the explorer's live view in a real headless Chromium (puppeteer-core in a child
// process, as explorer-driver.mjs) while this process inserts rows with another key, and
// prints what the page showed, as JSON.
// Usage: node explorer-live-driver.mjs <chromium> <origin>  (the service is at the root, where a URI typed as //host/... would leave the origin)
import puppeteer from 'puppeteer-core';

const [executablePath, origin] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const seen = {};
try {
  const page = await browser.newPage();
  const foreign = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(origin)) foreign.push(r.url());
  });
  page.on('pageerror', (e) => process.stderr.write(`page error: ${e.message}\n`));
  const text = (sel) => page.$eval(sel, (e) => e.textContent);
  const liveStatusIs = (pattern) =>
    page
      .waitForFunction((p) => new RegExp(p).test(document.getElementById('live-status').textContent), { timeout: 15000 }, pattern)
      .catch(async (e) => {
        throw new Error(
          `live status never matched ${pattern}: '${await text('#live-status')}', error '${await text('#error')}' (${e.message})`,
        );
      });
  const useKey = async (key) => {
    await page.$eval('#key', (e, v) => (e.value = v), key);
    await page.click('#keyform button');
    // The resource list and the root query settle before the live view is used.
    await page.waitForFunction(() => document.getElementById('status').textContent !== 'Loading...');
    await page.waitForSelector('.res button.name, #resources p');
  };
  const watch = async (selector) => {
    await page.$eval('#selector', (e, v) => (e.value = v), selector);
    await page.click('#watch');
  };
  const insert = async (body) => {
    const res = await fetch(`${origin}/Person`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'apikey writer-key' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`insert answered ${res.status}: ${await res.text()}`);
  };

  await page.goto(`${origin}/`);
  await page.waitForFunction(() => document.getElementById('resources').textContent.length > 0);

  await watch('/Person.Inserted');
  await liveStatusIs('^Refused');
  seen.withoutKey = { status: await text('#live-status'), error: await text('#error') };

  await useKey('pets-key');
  await watch('Person.Inserted');
  await liveStatusIs('^Refused');
  seen.otherKey = { status: await text('#live-status'), error: await text('#error') };

  await useKey('red-key');
  // A selector naming another host is refused before anything (the key above all) is sent.
  await watch('//evil.example/Person.Inserted');
  await liveStatusIs('^Failed');
  seen.otherHost = await text('#live-status');
  await page.$$eval('.res > button.name', (bs) => bs.find((b) => b.textContent === 'Person.Inserted').click());
  await liveStatusIs('^Watching');
  seen.clicked = { selector: await page.$eval('#selector', (e) => e.value), status: await text('#live-status') };

  await watch('/Person.Inserted/Age>=18');
  await liveStatusIs('^Watching /Person.Inserted/Age>=18$');
  seen.status = await text('#live-status');
  await insert([{ Id: 1, Team: 'blue', Age: 30 }]);
  await insert([{ Id: 2, Team: 'red', Age: 10 }]);
  await insert([
    { Id: 3, Team: 'red', Age: 40 },
    { Id: 4, Team: 'blue', Age: 50 },
  ]);
  await insert([{ Id: 5, Team: 'red', Age: 20 }]);
  // Events of one resource arrive in order: once the last one is shown, the others were sent or never will be.
  await page.waitForFunction(() => document.querySelector('#events td.data')?.textContent.includes('"Id":5'), { timeout: 15000 });
  seen.count = await text('#live-count');
  seen.events = await page.$$eval('#events tr', (trs) =>
    trs.map((tr) => ({ event: tr.children[1].textContent, id: tr.children[2].textContent, data: JSON.parse(tr.children[3].textContent) })),
  );

  await page.click('#stop');
  seen.stopped = await text('#live-status');
  // The server sees the page's connection end: poll its count of open streams.
  for (let i = 0; i < 150; i++) {
    seen.openAfterStop = Number(await (await fetch(`${origin}/open-streams`)).text());
    if (seen.openAfterStop === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  seen.foreign = foreign;
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
