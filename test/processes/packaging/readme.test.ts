/**
 * What the README promises about getting and licensing the package: an install that works while brood
 * is not published (pack a clone, install the tarball), the MIT license package.json declares in a
 * LICENSE file, the default the README quotes for a fan-out's parallelism, and a README that stays
 * within 300 lines.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { DEFAULTS } from '../../../src/defaults.js';
import { ROOT } from '../../support/run-cli.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; license: string };

/** The Install section, up to the next heading. */
function installSection(): string {
  const start = README.indexOf('\n## Install\n');
  expect(start).toBeGreaterThan(-1);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end);
}

it('Install says how to install from a clone: npm pack, then npm install of the tarball', () => {
  const install = installSection();
  expect(install).toContain('npm pack');
  expect(install).toContain(`npm install /path/to/brood/brood-${PKG.version}.tgz`);
  expect(install).not.toMatch(/^npm install brood\s*$/m);
});

it('LICENSE is the MIT license package.json declares, copyright the brood authors', () => {
  const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
  expect(PKG.license).toBe('MIT');
  expect(license.split('\n')[0]).toBe('MIT License');
  expect(license).toContain('Copyright (c) the brood authors');
  expect(license).toContain('Permission is hereby granted, free of charge');
});

it('the README quotes the real default of maxParallelToolCalls for a fan-out', () => {
  expect(README).toContain(`\`maxParallelToolCalls\` (default ${DEFAULTS.maxParallelToolCalls})`);
  expect(README).toMatch(/even when `limits\.agents` is\s+higher/);
});

it('the README is at most 300 lines', () => {
  expect(README.split('\n').length - (README.endsWith('\n') ? 1 : 0)).toBeLessThanOrEqual(300);
});
