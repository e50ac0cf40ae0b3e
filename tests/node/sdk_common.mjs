// What the Node scripts of tests/node share: the official client as a new user configures it
// against genhost (GENHOST_URL, GENHOST_KEY, our version header, no retries), and `failure`,
// which awaits a call that should fail and reports whether it failed with `kind` (the client's
// error class), its status and its body; 'no error' when it succeeded.
import RunwayML from '@runwayml/sdk';

export const client = new RunwayML({
  apiKey: process.env.GENHOST_KEY,
  baseURL: process.env.GENHOST_URL,
  defaultHeaders: { 'X-Service-Version': '2024-11-06' },
  maxRetries: 0,
});

export async function failure(promise, kind) {
  try {
    await promise;
    return 'no error';
  } catch (e) {
    return { is: e instanceof kind, status: e.status, body: e.error };
  }
}
