// Drives the official Node client (@runwayml/sdk, pinned in package.json) against a running
// genhost as a new user would: routers.create (defaults, and with settings), routers.update
// (a settings merge, then a rename that keeps the version), routers.list (paged with for await),
// routers.retrieve, routers.delete, and the client's errors for a duplicate slug, an unknown
// model and a router that does not exist. (Routed generation is not built yet: issue 22.)
//
// Run by the gtest NodeSdk.* (tests/http/uploads_test.cpp) through run_node_sdk.sh.
// Environment: GENHOST_URL, GENHOST_KEY. Prints one JSON line with what it saw, or
// {"error": {...}}; exits 1 on an unexpected error.
import RunwayML, { ConflictError, NotFoundError, BadRequestError } from '@runwayml/sdk';

const client = new RunwayML({
  apiKey: process.env.GENHOST_KEY,
  baseURL: process.env.GENHOST_URL,
  defaultHeaders: { 'X-Service-Version': '2024-11-06' },
  maxRetries: 0,
});

async function failure(promise, kind) {
  try {
    await promise;
    return 'no error';
  } catch (e) {
    return { is: e instanceof kind, status: e.status, body: e.error };
  }
}

const out = {};
try {
  out.plain = await client.routers.create({ slug: 'plain' });
  const ads = await client.routers.create({
    slug: 'ads-video',
    name: 'Ads',
    settings: {
      optimizeFor: 'quality',
      models: { mode: 'allowlist_only', ids: ['gen4_turbo', 'gen4_image'] },
      maxCreditsPerGeneration: { video: 100 },
    },
  });
  out.created = ads;
  out.merged = await client.routers.update(ads.id, { settings: { optimizeFor: 'cost' } });
  out.renamed = await client.routers.update(ads.id, { name: 'Ads (cheap)', description: null });
  const listed = [];
  for await (const r of client.routers.list({ limit: 1 })) listed.push(r.slug);
  out.listed = listed;
  out.retrieved = await client.routers.retrieve(ads.id);
  await client.routers.delete(out.plain.id);
  out.duplicate = await failure(client.routers.create({ slug: 'ads-video' }), ConflictError);
  out.unknownModel = await failure(
    client.routers.create({ slug: 'x', settings: { models: { mode: 'allowlist_only', ids: ['nope'] } } }),
    BadRequestError);
  out.missing = await failure(client.routers.retrieve(out.plain.id), NotFoundError);
} catch (e) {
  out.error = {
    name: e?.constructor?.name,
    status: e?.status,
    message: String(e?.message ?? e),
    body: e?.error,
  };
}
console.log(JSON.stringify(out));
process.exitCode = out.error ? 1 : 0;
