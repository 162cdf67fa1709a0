// Real VS Code: the packaged .vsix installed into code-server 4.100.3, shown in Debian's chromium and
// driven through the UI with playwright-core. The folder is a copy of examples/moe_router with a
// copy of the CLI fixture project inside it (cli-project/, a project of its own).
//
// It waits for the squiggles and the Problems entries of moe.py, hovers the flagged
// `.scatter_add_` call, saves a screenshot with the hover to test/e2e/artifacts/, then applies the
// BX201 quick fix to cli-project/train.py with Ctrl+. and checks the saved file; opens a notebook and
// waits for the squiggles in its cells (screenshot in test/e2e/artifacts/); then runs a toy
// trainer twice from the Command Palette (bitexact pair in a terminal), waits for its report and
// finds the pair in the Runs tree of the bitexact container.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';
import { Browser, CodeServer, editorText, goTo, openFile, openWorkbench, packageVsix, pickAction, plain, prerequisites, runCommand, startEditor } from './code-server-driver.js';
import { assertPresent, shouldSkip } from './prereq.js';

const SUITE = 'e2e vscode';
const SCREENSHOT = path.join(ROOT, 'test/e2e/artifacts/vscode-diagnostics-hover.png');
const RUNS_SCREENSHOT = path.join(ROOT, 'test/e2e/artifacts/vscode-runs-view.png');
const NOTEBOOK_SCREENSHOT = path.join(ROOT, 'test/e2e/artifacts/vscode-notebook.png');
const RULE_PAGE_SCREENSHOT = path.join(ROOT, 'test/e2e/artifacts/vscode-rule-page.png');
const pre = prerequisites();
const skip = shouldSkip(SUITE, pre);

let server: CodeServer | undefined;
let browser: Browser | undefined;
const scratch: string[] = [];

afterAll(async () => {
  // Each step on its own, so one failing still lets the others clean up.
  await browser?.close().catch((e) => console.error(`[${SUITE}] closing chromium:`, e));
  await server?.stop().catch((e) => console.error(`[${SUITE}] stopping code-server:`, e));
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
}, 30_000);

interface CliDiagnostic {
  path: string;
  rule: string;
  range: { start: { line: number; column: number } };
}

function cliFindings(folder: string, relative: string): CliDiagnostic[] {
  const report = JSON.parse(runCli(['check', '--format', 'json', relative], folder).stdout);
  return report.diagnostics.filter((d: CliDiagnostic) => d.path === relative);
}

describe('VS Code (code-server) with the packaged extension', () => {
  it.skipIf(skip)(
    'shows squiggles, Problems entries and a hover for moe.py, applies the BX201 quick fix through Ctrl+., and runs a pair from the palette',
    async () => {
      assertPresent(SUITE, pre);
      const t0 = Date.now();
      const marks: string[] = [];
      const mark = (what: string) => marks.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`);

      const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-vscode-'));
      scratch.push(work);
      const folder = path.join(work, 'moe_router');
      fs.cpSync(path.join(ROOT, 'examples/moe_router'), folder, { recursive: true });
      fs.cpSync(path.join(ROOT, 'test/fixtures/cli-project'), path.join(folder, 'cli-project'), { recursive: true });
      const vsix = await packageVsix(ROOT, work);
      mark('packaged');

      // What the editor must show, from the CLI on the same files.
      const moe = cliFindings(folder, 'moe.py');
      const scatter = moe.find((d) => d.rule === 'BX102');
      expect(scatter, 'examples/moe_router/moe.py should have a BX102 finding').toBeDefined();
      const train = cliFindings(path.join(folder, 'cli-project'), 'train.py');
      const benchmark = train.find((d) => d.rule === 'BX201');
      expect(benchmark, 'cli-project/train.py should have a BX201 finding').toBeDefined();

      const up = await startEditor(vsix, (started) => (started instanceof CodeServer ? (server = started) : (browser = started)));
      const page = up.browser.page;
      server = up.server;
      mark('code-server and chromium up');

      try {
        await openWorkbench(page, up.server.url, folder);
        mark('workbench');
        const editor = await openFile(page, 'moe.py', 'class MoE');
        mark('moe.py open');

        // Squiggles from the language server (warnings, and the guarded BX101 as info), on the
        // flagged call brought into view.
        await goTo(page, scatter!.range.start.line, scatter!.range.start.column);
        await editor.locator('.squiggly-warning').first().waitFor({ timeout: 60_000 });
        mark('squiggle');

        // Problems panel: one row per finding, with the source and the rule id.
        await page.keyboard.press('Control+Shift+M');
        const rows = page.locator('.markers-panel .monaco-list-row');
        await rows.filter({ hasText: 'BX102' }).first().waitFor({ timeout: 30_000 });
        const texts = (await rows.allInnerTexts()).map(plain);
        const bx102 = texts.find((t) => t.includes('BX102'))!;
        expect(bx102).toContain('bitexact');
        expect(bx102).toContain(`[Ln ${scatter!.range.start.line}, Col ${scatter!.range.start.column}]`);
        // The file's row counts its problems: as many as the CLI prints for moe.py.
        const fileRow = texts.find((t) => /^moe\.py\b/.test(t.trim()));
        expect(fileRow?.replace(/\s+/g, ' ')).toMatch(new RegExp(`^moe\\.py ${moe.length}$`));
        mark('problems');

        // The rule's code in the Problems row links to its page: rendered (VS Code's markdown
        // renderer, in a webview without scripts) and read-only, never the markdown source.
        await rows.filter({ hasText: 'BX102' }).first().locator('a').filter({ hasText: 'BX102' }).first().click();
        const pageTab = page.locator('.tabs-container .tab').filter({ hasText: 'BX102 scatter-add-cuda' });
        await pageTab.first().waitFor({ timeout: 15_000 });
        const rulePage = page.locator('iframe.webview.ready').last().contentFrame().locator('iframe#active-frame').contentFrame();
        await rulePage.locator('body[data-rule-page] h1').first().waitFor({ timeout: 15_000 });
        expect(plain(await rulePage.locator('h2').first().innerText())).toBe('Torch-version facts');
        expect(await page.locator('.tabs-container .tab').filter({ hasText: 'BX102.md' }).count()).toBe(0);
        fs.mkdirSync(path.dirname(RULE_PAGE_SCREENSHOT), { recursive: true });
        await page.screenshot({ path: RULE_PAGE_SCREENSHOT });
        await pageTab.first().locator('.codicon-close').click();
        mark('rule page');

        // Hover the flagged call with the mouse.
        await page.keyboard.press('Control+1'); // back to the editor
        await goTo(page, scatter!.range.start.line, scatter!.range.start.column + 2);
        const cursor = await editor.locator('.cursors-layer .cursor').first().boundingBox();
        expect(cursor, 'cursor position').toBeTruthy();
        const hover = page.locator('.monaco-hover:not(.hidden)').filter({ hasText: 'measured' });
        await page.mouse.move(cursor!.x + 200, cursor!.y + 200);
        await page.mouse.move(cursor!.x + 4, cursor!.y + cursor!.height / 2, { steps: 4 });
        await hover.first().waitFor({ state: 'visible', timeout: 15_000 });
        const hoverText = plain(await hover.first().innerText());
        expect(hoverText).toContain('BX102');
        expect(hoverText).toContain('measured');
        mark('hover');
        // Into the hover (straight up, so the mouse never leaves the call and the hover) and scroll
        // its content to the rule's measured facts, which is what the screenshot is for.
        const box = (await hover.first().boundingBox())!;
        await page.mouse.move(cursor!.x + 4, box.y + box.height - 12, { steps: 3 });
        await page.mouse.wheel(0, 110);
        await page.waitForTimeout(500);
        await hover.first().waitFor({ state: 'visible', timeout: 5_000 });
        fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
        await page.screenshot({ path: SCREENSHOT });
        mark('screenshot');

        // Quick fix through the UI: cursor on `cudnn.benchmark = True`, Ctrl+., pick the BX201 fix.
        await page.mouse.move(5, 5);
        await page.keyboard.press('Escape');
        const trainEditor = await openFile(page, 'cli-project/train.py', 'cudnn.benchmark');
        await trainEditor.locator('.squiggly-warning, .squiggly-error').first().waitFor({ timeout: 30_000 });
        await goTo(page, benchmark!.range.start.line, benchmark!.range.start.column + 4);
        await page.keyboard.press('Control+.');
        await pickAction(page, 'BX201: Set cudnn.benchmark = False');
        await expect.poll(() => editorText(trainEditor), { timeout: 10_000 }).toContain('torch.backends.cudnn.benchmark = False');
        await page.keyboard.press('Control+S');
        const onDisk = path.join(folder, 'cli-project/train.py');
        await expect.poll(() => fs.readFileSync(onDisk, 'utf8'), { timeout: 10_000 }).toContain('torch.backends.cudnn.benchmark = False');
        expect(fs.readFileSync(onDisk, 'utf8')).not.toContain('benchmark = True');
        mark('quick fix saved');
        // And the finding is gone once the server re-checked the edited file.
        await expect.poll(() => trainEditor.locator('.squiggly-warning, .squiggly-error').count(), { timeout: 15_000 }).toBe(0);
        await expect.poll(() => page.locator('.markers-panel .monaco-list-row').filter({ hasText: 'BX201' }).count(), { timeout: 15_000 }).toBe(0);
        mark('finding gone');

        // A notebook: its cells are checked together, and the flagged call in a code cell gets its
        // squiggle as in a file (the same findings `bitexact check` prints for the .ipynb).
        fs.copyFileSync(path.join(ROOT, 'test/fixtures/notebooks/train.ipynb'), path.join(folder, 'explore.ipynb'));
        const notebookFindings = cliFindings(folder, 'explore.ipynb');
        expect(notebookFindings.map((d) => d.rule)).toEqual(['BX101', 'BX201']);
        // From the Explorer, which lists a new file as soon as it exists (Quick Open's index may lag;
        // and openFile waits for a text editor, while a notebook's first editor is a hidden markdown one).
        await page.locator('.explorer-folders-view .monaco-list-row').filter({ hasText: 'explore.ipynb' }).first().click({ timeout: 30_000 });
        const notebook = page.locator('.notebook-editor');
        await notebook.locator('.squiggly-warning').first().waitFor({ timeout: 60_000 });
        // Problems lists the notebook's findings under it, one row each, as the CLI prints them.
        const notebookRows = page.locator('.markers-panel .monaco-list-row');
        await notebookRows.filter({ hasText: 'explore.ipynb' }).first().waitFor({ timeout: 30_000 });
        const listed = (await notebookRows.allInnerTexts()).map(plain);
        const under = listed.slice(listed.findIndex((t) => t.includes('explore.ipynb')) + 1, listed.findIndex((t) => t.includes('explore.ipynb')) + 3);
        expect(under.map((t) => /BX\d{3}/.exec(t)?.[0])).toEqual(['BX101', 'BX201']);
        await page.screenshot({ path: NOTEBOOK_SCREENSHOT });
        mark('notebook squiggles');

        // Paired runs from the Command Palette: the command typed into the input box runs twice through
        // the language server (bitexact/runPair), and the pair's report lands in .bitexact/runs/ as it
        // would from the CLI.
        fs.copyFileSync(path.join(ROOT, 'examples/toy_runs/deterministic_trainer.py'), path.join(folder, 'toy.py'));
        await runCommand(page, 'bitexact: Run a training command twice and compare (pair)');
        const commandBox = page.locator('.quick-input-widget input');
        await commandBox.waitFor({ state: 'visible', timeout: 15_000 });
        await commandBox.fill('python3 toy.py');
        await page.keyboard.press('Enter');
        const reports = () => {
          const runs = path.join(folder, '.bitexact/runs');
          if (!fs.existsSync(runs)) return '';
          return fs.readdirSync(runs).map((d) => path.join(runs, d, 'report.txt')).filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f, 'utf8')).join('\n');
        };
        await expect.poll(reports, { timeout: 90_000 }).toContain('BITWISE');
        mark('pair from the palette');
        // The Runs view in the bitexact container (its activity-bar icon) lists the pair with its verdict.
        await page.locator('.activitybar .action-item .action-label[aria-label^="bitexact"]').first().click({ timeout: 15_000 });
        const runsPane = page.locator('.pane').filter({ has: page.locator('.pane-header', { hasText: /^\s*runs/i }) });
        const header = runsPane.locator('.pane-header').first();
        await header.waitFor({ timeout: 15_000 });
        if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
        const pairRow = runsPane.locator('.monaco-list-row').filter({ hasText: 'BITWISE IDENTICAL' }).first();
        await pairRow.waitFor({ timeout: 30_000 });
        // Clicking shows its charts in the Divergence view (test/e2e/divergence.test.ts); its inline
        // action opens the text report; the twistie lists the metrics.
        await pairRow.click();
        // The tree refreshes as the pair's last files land (a refresh re-creates the rows, and a click
        // landing on a row being replaced runs nothing, as a person would see and click again): the
        // action is clicked until its tab opens.
        const reportTab = page.locator('.tab.active').filter({ hasText: 'report.txt' });
        await expect
          .poll(async () => {
            await pairRow.locator('.action-label[aria-label="Open text report"]').click({ timeout: 5_000 }).catch(() => undefined);
            return reportTab.waitFor({ timeout: 3_000 }).then(() => true, () => false);
          }, { timeout: 45_000, interval: 500 })
          .toBe(true);
        await pairRow.locator('.monaco-tl-twistie').click();
        await runsPane.locator('.monaco-list-row').filter({ hasText: 'grad_norm' }).first().waitFor({ timeout: 15_000 });
        mark('runs view');

        // A pair that diverges: the view names the hazard bitexact check finds in the trainer, and a
        // click on it opens the line (from the divergence back to the code).
        fs.copyFileSync(path.join(ROOT, 'examples/toy_runs/completion_order_trainer.py'), path.join(folder, 'toy_co.py'));
        await runCommand(page, 'bitexact: Run a training command twice and compare (pair)');
        await commandBox.waitFor({ state: 'visible', timeout: 15_000 });
        await commandBox.fill('python3 toy_co.py');
        await page.keyboard.press('Enter');
        const differsRow = runsPane.locator('.monaco-list-row').filter({ hasText: 'DIFFERS from step' }).first();
        await differsRow.waitFor({ timeout: 90_000 });
        await differsRow.locator('.monaco-tl-twistie').click();
        const hazardRow = runsPane.locator('.monaco-list-row').filter({ hasText: 'BX308 toy_co.py' }).first();
        await hazardRow.waitFor({ timeout: 15_000 });
        await page.screenshot({ path: RUNS_SCREENSHOT });
        await hazardRow.click();
        await page.locator('.tab.active').filter({ hasText: 'toy_co.py' }).waitFor({ timeout: 15_000 });
        const hazardLine = cliFindings(folder, 'toy_co.py').find((d) => d.rule === 'BX308')!.range.start.line;
        await page.locator('.statusbar-item', { hasText: `Ln ${hazardLine},` }).waitFor({ timeout: 10_000 });
        mark('hazard opened from the runs view');
      } catch (e) {
        const shot = path.join(os.tmpdir(), `bitexact-vscode-failure-${process.pid}.png`);
        await page.screenshot({ path: shot }).catch(() => undefined);
        const detail = `\nsteps: ${marks.join(', ')}\nfailure screenshot: ${shot}\n--- code-server log\n${up.server.logTail()}\n${up.server.extensionLog()}`;
        if (e instanceof Error) e.message += detail;
        throw e;
      } finally {
        console.info(`[${SUITE}] ${marks.join(', ')}`);
      }
    },
    210_000,
  );
});
