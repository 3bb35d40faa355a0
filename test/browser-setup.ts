import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './helpers/browser.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The one Chromium of the browser project's run (test/helpers/browser.ts connects to it). */
    browserWsEndpoint: string | undefined;
  }
}

/**
 * One Chromium for the whole browser project, instead of one launched per test file (about a
 * second of start-up each, on both cores at once). Each test still works in a fresh context of its
 * own (cookies, storage), so the files stay independent. Without Chromium installed, nothing is
 * started and launchBrowser() says what to install.
 */
export default async function setup(project: TestProject) {
  if (!existsSync(CHROMIUM_PATH)) {
    project.provide('browserWsEndpoint', undefined);
    return;
  }
  const server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  project.provide('browserWsEndpoint', server.wsEndpoint());
  return async () => {
    await server.close();
  };
}
