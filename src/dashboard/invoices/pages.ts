import { Router } from 'express';
import type { DashContext } from '../context.ts';

// Placeholder while this section is built (issue 14): answers the dashboard's 404 page.
export function invoicesPages(_ctx: DashContext): Router {
  return Router();
}
