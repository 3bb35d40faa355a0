// Shared with other folders' tests: test/helpers/dash-client.ts. Re-exported for the dashboard's tests.
export { cspViolations, createUser, DashClient, formKey, PASSWORD, SHOTS, signedIn, signInBrowser, type Answer } from '../helpers/dash-client.ts';
