// Drives quire's Gotenberg routes with Gotenberg's npm clients, unchanged:
// each conversion's answer is written to the directory named by the first
// argument, for the Go test (internal/gotenberg) to check with poppler and
// qpdf. QUIRE_URL, QUIRE_KEY, PAGE_URL (a page to convert by URL), DOCX
// (an office document's path) and HOOK_URL (a webhook receiver) come from
// the environment.
'use strict';
const fs = require('fs');
const path = require('path');
const { Readable } = require('stream');
const { Chromiumly, HtmlConverter, HtmlScreenshot, MarkdownConverter, UrlConverter, LibreOffice, PDFEngines } = require('chromiumly');
const gjc = require('gotenberg-js-client');

const out = process.argv[2];
const { QUIRE_URL, QUIRE_KEY, PAGE_URL, DOCX, HOOK_URL } = process.env;
const page = '<!DOCTYPE html><html><head><link rel="stylesheet" href="style.css"></head><body><h1>Invoice 42</h1></body></html>';

async function save(name, answer) {
  if (answer instanceof Readable) {
    const chunks = [];
    for await (const c of answer) chunks.push(c);
    answer = Buffer.concat(chunks);
  }
  fs.writeFileSync(path.join(out, name), answer);
}

async function chromiumly() {
  Chromiumly.configure({ endpoint: QUIRE_URL, username: 'chromiumly', password: QUIRE_KEY });
  await save('chromiumly-html.pdf', await new HtmlConverter().convert({
    html: Buffer.from(page),
    assets: [{ file: Buffer.from('h1 { color: #c00 }'), name: 'style.css' }],
    properties: { size: { width: 8.27, height: 11.7 }, margin: { top: 0.5, bottom: 0.5, left: 0.5, right: 0.5 }, printBackground: true },
  }));
  await save('chromiumly-markdown.pdf', await new MarkdownConverter().convert({
    html: Buffer.from('<html><body>{{ toHTML "file.md" }}</body></html>'),
    markdown: Buffer.from('# Release notes\n\n- first item\n'),
  }));
  await save('chromiumly-url.pdf', await new UrlConverter().convert({ url: PAGE_URL }));
  await save('chromiumly-extras.pdf', await new HtmlConverter().convert({
    html: Buffer.from('<html><body><p id="ua"></p><script>document.getElementById("ua").textContent = navigator.userAgent; window.ready = true</script>' +
      '<style>@media (prefers-color-scheme: dark) { .light { display: none } }</style><p class="light">Lightscheme</p></body></html>'),
    header: Buffer.from('<div style="font-size: 10px; margin-left: 1cm">Chromiumlyhead <span class="pageNumber"></span></div>'),
    footer: Buffer.from('<div style="font-size: 10px; margin-left: 1cm">Chromiumlyfoot</div>'),
    waitForExpression: 'window.ready === true', userAgent: 'ChromiumlyAgent/6',
    emulatedMediaFeatures: [{ name: 'prefers-color-scheme', value: 'dark' }], properties: { singlePage: true },
  }));
  // The checks of the loaded page, all passed, with the network wait, the
  // outline and omitBackground; then a page whose script throws: the 409,
  // which chromiumly throws with its status and body.
  await save('chromiumly-checks.pdf', await new HtmlConverter().convert({
    html: Buffer.from('<html><body><h1>Checked</h1><script>window.ready = true</script></body></html>'),
    properties: { printBackground: true, omitBackground: true }, waitForExpression: 'window.ready === true',
    failOnConsoleExceptions: true, failOnResourceLoadingFailed: true, failOnResourceHttpStatusCodes: [499, 599],
    ignoreResourceHttpStatusDomains: ['example.com'], skipNetworkIdleEvent: false, generateDocumentOutline: true,
  }));
  try {
    await new HtmlConverter().convert({
      html: Buffer.from('<html><body><script>throw new Error("Clientboom")</script></body></html>'), waitDelay: '1ms', failOnConsoleExceptions: true,
    });
    await save('chromiumly-conflict.txt', 'no error');
  } catch (err) {
    await save('chromiumly-conflict.txt', String(err.message));
  }
  await save('chromiumly-shot.png', await new HtmlScreenshot().capture({
    html: Buffer.from(page), properties: { format: 'png', width: 640, height: 480, clip: true },
  }));
  await save('chromiumly-office.pdf', await LibreOffice.convert({ files: [DOCX], properties: { nativePageRanges: { from: 1, to: 1 } } }));
  const merged = await PDFEngines.merge({ files: [path.join(out, 'chromiumly-html.pdf'), path.join(out, 'chromiumly-url.pdf')] });
  await save('chromiumly-merge.pdf', merged);
  await save('chromiumly-split.zip', await PDFEngines.split({
    files: [path.join(out, 'chromiumly-merge.pdf')], options: { mode: 'intervals', span: '1' },
  }));
  // Answered at once; the merged PDF goes to the webhook, where the Go test waits for it.
  await PDFEngines.merge({
    files: [path.join(out, 'chromiumly-html.pdf'), path.join(out, 'chromiumly-url.pdf')],
    webhook: { webhookUrl: HOOK_URL + '/done', webhookErrorUrl: HOOK_URL + '/failed', webhookExtraHttpHeaders: { 'X-Client': 'chromiumly' } },
  });
}

async function gotenbergJsClient() {
  const auth = { auth: 'gotenberg-js-client:' + QUIRE_KEY };
  const toPDF = gjc.pipe(gjc.gotenberg(QUIRE_URL + '/forms/chromium', auth), gjc.convert, gjc.html, gjc.to(gjc.a4), gjc.please);
  await save('gjc-html.pdf', await toPDF({ 'index.html': page, 'style.css': 'h1 { color: #c00 }' }));
  const md = gjc.pipe(gjc.gotenberg(QUIRE_URL + '/forms/chromium', auth), gjc.convert, gjc.markdown, gjc.please);
  await save('gjc-markdown.pdf', await md({ 'index.html': '<html><body>{{ toHTML "notes.md" }}</body></html>', 'notes.md': '# Release notes\n' }));
  const merge = gjc.pipe(gjc.gotenberg(QUIRE_URL + '/forms/pdfengines', auth), gjc.merge, gjc.please);
  await save('gjc-merge.pdf', await merge({ 'a.pdf': fs.readFileSync(path.join(out, 'gjc-html.pdf')), 'b.pdf': fs.readFileSync(path.join(out, 'gjc-markdown.pdf')) }));
}

(async () => {
  await chromiumly();
  await gotenbergJsClient();
})().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
