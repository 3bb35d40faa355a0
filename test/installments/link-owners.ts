// Moved to test/helpers/portal-links.ts (the portal's tests use it too); kept for branches in flight.
export { linkTokens, portalLinkOwners } from '../helpers/portal-links.ts';
